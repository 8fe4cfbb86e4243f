# cdag tests — shared helpers of the tests/cli/*.sh scripts (sourced, not run).
# Each script sets cdag=$1 src=$2, sources this file, runs expectations, then calls finish.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# expect_status STATUS CMD...: runs CMD, stdout to $tmp/out, stderr to $tmp/err
expect_status() {
  local want=$1; shift
  "$@" >"$tmp/out" 2>"$tmp/err"
  local got=$?
  [ "$got" -eq "$want" ] || fail "'$*' exited $got, expected $want: $(cat "$tmp/err")"
}

expect_out() { grep -qF -- "$1" "$tmp/out" || fail "stdout of the last command lacks '$1': $(head -c 300 "$tmp/out")"; }
expect_err() { grep -qF -- "$1" "$tmp/err" || fail "stderr of the last command lacks '$1': $(cat "$tmp/err")"; }

finish() {
  [ "$fails" -eq 0 ] || { echo "$(basename "$0"): $fails failure(s)"; exit 1; }
  echo "$(basename "$0"): all expectations met"
}
