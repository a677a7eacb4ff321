/* fuzz_vad.c — libFuzzer target: sotto_vad_load on a Silero VAD GGUF file, then a short
 * stream through the loaded model and the speech intervals of its probabilities.
 *
 * Input: a little-endian uint32 PAD, then the file's first bytes; the file is those bytes
 * followed by min(PAD, 4 MiB) zero bytes. A valid model is 1.2 MB, almost all of it
 * weights, so whole-file inputs would spend the fuzzer's mutations on float data: with the
 * weights as zero padding a valid model is a 1.4 kB input (tests/fuzz/make_vad_seeds.py),
 * and the mutations land on the header, keys, tensor infos and offsets. */
#include "fuzz_common.h"

#define MAX_PAD (4u << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 4) return 0;
    uint32_t pad = (uint32_t)data[0] | (uint32_t)data[1] << 8 | (uint32_t)data[2] << 16 | (uint32_t)data[3] << 24;
    if (pad > MAX_PAD) pad = MAX_PAD;
    size_t n = size - 4 + pad;
    uint8_t *file = calloc(n ? n : 1, 1);
    if (!file) abort();
    memcpy(file, data + 4, size - 4);
    const char *path = fuzz_write(fuzz_dir("vad"), "vad.gguf", file, n);
    free(file);
    sotto_vad *vad = NULL;
    if (sotto_vad_load(path, &vad) != SOTTO_OK) {
        if (vad || !sotto_last_error()[0]) abort(); /* a refusal says why and leaves nothing */
        return 0;
    }
    /* 1.5 windows of a deterministic signal, pushed in two pieces, then flushed */
    float x[768], probs[3];
    for (int i = 0; i < 768; i++) x[i] = (float)((i * 37) % 101 - 50) / 64.0f;
    sotto_vad_stream *s = NULL;
    int64_t got = 0, one = 0;
    if (sotto_vad_stream_init(vad, 1, &s) != SOTTO_OK) abort();
    if (sotto_vad_stream_push(s, x, 300, probs, 3, &one) != SOTTO_OK || one != 0) abort();
    if (sotto_vad_stream_push(s, x + 300, 468, probs, 3, &got) != SOTTO_OK || got != 1) abort();
    if (sotto_vad_stream_flush(s, probs + got, &one) != SOTTO_OK || one != 1) abort();
    got += one;
    for (int64_t i = 0; i < got; i++)
        if (probs[i] < 0.0f || probs[i] > 1.0f) abort(); /* a sigmoid (NaN only where sums overflowed) */
    sotto_vad_interval *iv = NULL;
    int64_t n_iv = 0;
    if (sotto_vad_intervals(probs, got, 768, NULL, &iv, &n_iv) != SOTTO_OK || n_iv > 1) abort();
    sotto_free(iv);
    sotto_vad_stream_free(s);
    sotto_vad_free(vad);
    return 0;
}
