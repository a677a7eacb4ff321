# sotto — the two commands of the README, plus helpers.
#   make demo   set everything up and transcribe the bundled sample with the default model
#   make test   set everything up and run the whole test suite
.PHONY: demo test test-asan build setup clean

SAMPLE := tests/data/clips/librivox-0870.wav

demo:
	SOTTO_SKIP_BASE=1 SOTTO_SKIP_VULKAN=1 SOTTO_SKIP_PYTHON=1 SOTTO_SKIP_TEST_TOOLS=1 sh scripts/setup.sh
	@echo "== sotto transcribe $(SAMPLE)"
	./build/sotto transcribe $(SAMPLE)

test: setup
	cd build && ctest --output-on-failure -j 2 -LE long

# the slower long-form goldens too (base beam search and defaults, the 5-minute readings)
.PHONY: test-long
test-long: setup
	cd build && ctest --output-on-failure -j 2

# the whole suite again in an AddressSanitizer + UndefinedBehaviorSanitizer build, all but
# `valgrind_cli` (valgrind does not run a program built with ASan; it runs in `make test`)
# and `golden_tiny_en_ggml_f16` (5 sanitized minutes on the weights golden_tiny_en_f16_gguf
# runs; the ggml loader itself runs sanitized in ggml_*, badfiles and cli_malformed), and of
# the long-form goldens all but tiny.en greedy and beam search on long2 (those two cover
# every search path sanitized; the others run minutes each under ASan for the same code),
# and `quality_weight_types` (5 sanitized minutes converting and decoding every weight type
# on every clip: the same loaders and kernels the goldens of each type run sanitized), and
# `serve_load`, `serve_http`, `serve_openai` and `serve_realtime` (50, 10, 8 and 8 sanitized
# transcriptions and their references: 100-190 s each under ASan, and RSS means nothing
# under its quarantine; serve_realtime ran sanitized by hand, clean, and found a NULL memmove;
# `serve_fuzz` runs the server sanitized, every route, the upload, the queue, the workers,
# hang-ups and the drain, WebSocket sessions and their frames, and fails on any ASan, UBSan
# or leak report), and the Python
# package's tests (python_*: they run the extension pip built, not this build), and
# of the word-timestamp goldens all but two tiny.en clips (the others run the same code,
# 20-50 sanitized seconds each; long2 and gaps10 with the hallucination rule ran sanitized
# by hand, minutes each).
# Without the Vulkan backend: Mesa's lavapipe leaks a block of its own at exit, which
# LeakSanitizer cannot attribute (the driver is unloaded by then); `make test-vulkan`
# runs the Vulkan tests. serve_batched runs sanitized (skipped from 2026-12-02, when pooled
# answers were once 4e-5 off the CLI's avg_logprob there; on 2026-12-05 it passed sanitized
# on every x86 kernel set, and valgrind's memcheck found nothing in a batched -j 2 run).
ASAN_SKIP := python_|valgrind|quality_weight_types|serve_(load|http|openai|realtime)|golden_tiny_en_ggml_f16|longform_tiny_en_(default|nocond|prompt|libri5)|longform_base_|language_detection|silence_and_noise|words_tiny_en_long2|words_tiny_en_gaps10_hallucination|words_base_|words_tiny_en_espeak-ng-0[57]
test-asan: setup-nopython
	cmake -S . -B build-asan -DSOTTO_SANITIZE=ON -DSOTTO_VULKAN=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build build-asan -j 2 >/dev/null
	cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	    ctest --output-on-failure -j 2 -LE long -E '$(ASAN_SKIP)$(ASAN_MORE_SKIP)'

# CI's sanitized run (.ci/run, under its time budget): test-asan less the tests that decode
# again, sanitized for minutes, with weights or loaders whose code runs sanitized elsewhere:
# golden_tiny_en_ct2, _hf and _gguf (the f16 default model's golden runs the same decoder,
# golden_rand-* the f32 products; tokenize_tiny_en_* load those files sanitized),
# golden_base_ct2, wer_base and ggml_base (base's shapes run as golden_rand-base;
# tokenize_base_ct2 loads it), ggml_tiny_en_f16 (ggml_tiny_en_q8_0 runs the ggml loader),
# cli_run_null (null_backend runs that backend); and cli_run's `sotto run --expected` on 2
# of the 12 golden clips (TEST_RUN_CLIPS: the contract's other checks all run). Since the
# CI run of 2026-12-03 (4195 s, over the budget) also the CLI suites that transcribe tiny.en
# over and over to check the tool's options, messages and files (cli_transcribe_ux, _io,
# cli_common, cli_batch, cli_stream: 100-220 sanitized s each; the library paths under them
# run sanitized in golden_tiny_en_f16_gguf, the longform goldens, transcript_formats,
# batch_pool and stream_session, the argument parsing in cli_run and cli_malformed),
# golden_rand-small (golden_rand-base runs the same products sanitized) and ggml_tiny_en_q8_0
# (the ggml loader runs sanitized in badfiles, cli_malformed and fuzz_ggml). Measured on 2
# cores (AMD EPYC Zen 3, 2026-12-03): test-asan-ci 25.5 min before these, 2710 sanitized
# test-seconds; these are 1070 of them, and the run 13.3 min of ctest without them. cli_run
# sanitized keeps the contract's checks of TEST_RUN_SCOPE=device (tests/cli/test_run.sh:
# the strict parsing all stays; CRLF id files and prefix spellings are fuzz_idlist's too).
ASAN_CI_SKIP := golden_tiny_en_(ct2|hf|gguf)|golden_base_ct2|wer_base|^ggml_base|ggml_tiny_en_(f16|q8_0)|cli_run_null|cli_transcribe_(ux|io)|cli_common|cli_batch|cli_stream|golden_rand-small
.PHONY: test-asan-ci
test-asan-ci:
	TEST_RUN_CLIPS="librivox-0870 espeak-ng-01" TEST_RUN_SCOPE=device $(MAKE) test-asan ASAN_MORE_SKIP='|$(ASAN_CI_SKIP)'

setup:
	sh scripts/setup.sh

# the same without the Python venvs and the package's build (test-asan and test-arm run no
# Python-venv test)
.PHONY: setup-nopython
setup-nopython:
	SOTTO_SKIP_PYTHON=1 sh scripts/setup.sh

build:
	cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build build -j 2

clean:
	rm -rf build

# Fuzzing (docs/ROBUSTNESS.md): libFuzzer targets built with clang + ASan/UBSan in build-fuzz/.
#   make fuzz      every target for FUZZ_SECONDS (default 600) each
#   make fuzz-ci   replay the committed corpus and reproducers, then 30 s per target
.PHONY: fuzz fuzz-ci test-arm
FUZZ_SECONDS ?= 600

fuzz:
	sh tests/fuzz/run.sh $(FUZZ_SECONDS)

fuzz-ci:
	sh tests/fuzz/run.sh 30 --ci

# the aarch64 build (NEON kernels) under qemu-user: kernels against their references and
# tiny.en against the eager goldens on two clips (scripts/test-arm.sh; about 7 minutes)
test-arm: setup-nopython
	sh scripts/test-arm.sh

# the same with one golden clip (CI's, under its time budget: each clip is about 5 emulated minutes)
.PHONY: test-arm-ci
test-arm-ci: setup-nopython
	SOTTO_ARM_CLIPS=librivox-0870 sh scripts/test-arm.sh

# The Vulkan backend in full on whatever Vulkan device the machine has (lavapipe without a
# GPU), validation layer on: every op, tiny.en f32/f16/q8_0 against the CPU on all 12 golden
# clips, the `sotto run` contract on all of them (scripts/test-vulkan.sh; `make test`
# runs three clips of it). `make bench-gpu`: encoder and decoder times (bench/gpu.sh).
.PHONY: test-vulkan bench-gpu
test-vulkan: setup
	sh scripts/test-vulkan.sh

bench-gpu: setup
	sh bench/gpu.sh

# Speed against whisper.cpp and faster-whisper on this machine; writes docs/BENCHMARKS.md.
#   make bench   builds/installs the peers into build-bench/ and .cache/ (BENCH_QUICK=1: shorter)
.PHONY: bench bench-longform
bench:
	sh bench/run.sh
	python3 bench/longform.py

# long-form end to end against the peers alone (after `make bench` built them)
bench-longform:
	python3 bench/longform.py
