#!/bin/bash
# test_devices.sh — the --device contract of the sotto tool: `sotto info --devices`, the
# choice auto makes, and exit 2 with a message when Vulkan is not built in, there is no
# loader (SOTTO_VULKAN_LOADER pointed at nothing), no driver (VK_ICD_FILENAMES pointed at
# nothing), no such device, or device memory runs out (SOTTO_VK_MAX_MEMORY_MB); exit 1 for
# a device string of another form, before the model loads. Runs on the small random model.
# usage: test_devices.sh SOTTO SMALL.gguf CLIP.wav TMP_DIR
set -u
SOTTO=$1 SMALL=$2 CLIP=$3 TMP=$4
mkdir -p "$TMP"
pass=0 fail=0
unset SOTTO_DEVICE
. "$(dirname "$0")/lib.sh"

"$SOTTO" mel "$CLIP" "$TMP/clip.mel" || { echo "FAIL: sotto mel"; exit 1; }
RUN=("$SOTTO" run -m "$SMALL" --mel "$TMP/clip.mel" --max-new-tokens 2)

expect 0 "stdout:cpu " "$SOTTO" info --devices
expect 0 "device cpu (" "${RUN[@]}" --device cpu
for bad in gpu vulkan: vulkan:x vulkan:-1 cuda ""; do
    expect 1 "is not a device" "${RUN[@]}" --device "$bad"
done
expect 1 "SOTTO_DEVICE 'metal' is not a device" env SOTTO_DEVICE=metal "${RUN[@]}"
expect 1 "is not a device" "$SOTTO" transcribe -m "$SMALL" --device nope "$CLIP"
expect 1 "is not a device" "$SOTTO" bench -m "$SMALL" --device nope

if grep -q "not built in" "$TMP/out" 2>/dev/null || "$SOTTO" info --devices | grep -q "not built in"; then
    # a build without the Vulkan backend
    expect 2 "vulkan is not built in" "${RUN[@]}" --device vulkan
    expect 2 "vulkan is not built in" "${RUN[@]}" --device vulkan:0
    expect 0 "device cpu (" "${RUN[@]}" --device auto
    echo "$pass passed, $fail failed (Vulkan not built in)"
    [[ $fail -eq 0 ]]
    exit
fi

# a machine without a Vulkan loader, or one without drivers: vulkan fails, auto is the CPU
expect 2 "no Vulkan loader" env SOTTO_VULKAN_LOADER=/nonexistent/libvulkan.so.1 "${RUN[@]}" --device vulkan
expect 0 "device cpu (" env SOTTO_VULKAN_LOADER=/nonexistent/libvulkan.so.1 "${RUN[@]}" --device auto
expect 0 "stdout:vulkan       none: vulkan: no Vulkan loader" env SOTTO_VULKAN_LOADER=/nonexistent/libvulkan.so.1 \
    "$SOTTO" info --devices
expect 2 "device vulkan: no Vulkan" env VK_ICD_FILENAMES=/nonexistent/icd.json VK_DRIVER_FILES=/nonexistent/icd.json \
    "${RUN[@]}" --device vulkan
expect 0 "device cpu (" env VK_ICD_FILENAMES=/nonexistent/icd.json VK_DRIVER_FILES=/nonexistent/icd.json \
    "${RUN[@]}" --device auto

if ! "$SOTTO" info --devices | grep -q "^vulkan:0 "; then
    echo "$pass passed, $fail failed (no Vulkan device on this machine)"
    [[ $fail -eq 0 ]]
    exit
fi
n_dev=$("$SOTTO" info --devices | grep -c "^vulkan:")
expect 2 "no device vulkan:$n_dev ($n_dev found)" "${RUN[@]}" --device "vulkan:$n_dev"
expect 0 "device vulkan:0 " "${RUN[@]}" --device vulkan:0
expect 0 "device vulkan:" "${RUN[@]}" --device vulkan
# auto takes a GPU, never a software device
if "$SOTTO" info --devices | grep -E "^vulkan:[0-9]+ " | grep -qE "(discrete|integrated) GPU"; then
    expect 0 "device vulkan:" "${RUN[@]}" --device auto
else
    expect 0 "device cpu (" "${RUN[@]}" --device auto
    expect 0 "stdout:(auto skips it)" "$SOTTO" info --devices
fi
expect 2 "out of device memory" env SOTTO_VK_MAX_MEMORY_MB=4 "${RUN[@]}" --device vulkan
expect 2 "SOTTO_VK_MAX_MEMORY_MB='abc' is not a count of MB" env SOTTO_VK_MAX_MEMORY_MB=abc "${RUN[@]}" --device vulkan
expect 2 "SOTTO_VK_KERNELS='bogus' (direct or tiled" env SOTTO_VK_KERNELS=bogus "${RUN[@]}" --device vulkan
# the same ids on the device as on the CPU, and the other commands take --device too
"${RUN[@]}" --device cpu --max-new-tokens 20 --eos 0 >"$TMP/cpu.ids" 2>/dev/null
expect 0 "stdout:$(cat "$TMP/cpu.ids")" "${RUN[@]}" --device vulkan --max-new-tokens 20 --eos 0
expect 0 "device vulkan:" "$SOTTO" transcribe -m "$SMALL" --device vulkan "$CLIP"
expect 0 "stdout:\"device\": \"vulkan:" "$SOTTO" bench -m "$SMALL" --device vulkan --runs 1 --tokens 3

echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
