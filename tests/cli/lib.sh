# lib.sh — what the CLI test scripts share (sourced; they set TMP, pass and fail first).

# ok, bad MESSAGE: a check passed, or failed (said with MESSAGE).
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# expect CODE NEEDLE CMD...: runs CMD, checks its exit code and that NEEDLE occurs in
# its stderr (or stdout when NEEDLE starts with 'stdout:').
expect() {
    local code=$1 needle=$2
    shift 2
    "$@" >"$TMP/out" 2>"$TMP/err"
    local rc=$? where=$TMP/err text=$needle
    if [[ $needle == stdout:* ]]; then where=$TMP/out text=${needle#stdout:}; fi
    if [[ $rc -eq $code ]] && grep -qF -- "$text" "$where"; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL: expected exit $code and '$text' from: $*"
        echo "  got exit $rc; stdout: $(head -c 300 "$TMP/out")"
        echo "  stderr: $(head -c 300 "$TMP/err")"
    fi
}
