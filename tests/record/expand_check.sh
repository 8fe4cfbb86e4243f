# cdag tests — tests/record/expand_check.sh: sourced by the recorder's test scripts (after
# tests/cli/lib/expect.sh): expand_check REC: from REC's part files, the flat merge
# (`cdag record --merge --flat`) and the distinct one (`cdag record --merge`) expanded
# (`cdag record --expand`) must be the same files, byte for byte (docs/recording.md, Phases).
# Leaves them in $tmp/xc/flat, $tmp/xc/dist and $tmp/xc/exp.
expand_check() {
  local rec=$1 x=$tmp/xc f
  rm -rf "$x"
  mkdir -p "$x/flat" "$x/dist"
  cp "$rec"/rank-*.part "$x/flat/" && cp "$rec"/rank-*.part "$x/dist/" || { fail "$rec has no part file"; return; }
  "$cdag" record --merge --flat "$x/flat" >"$x/out" 2>&1 || { fail "--merge --flat: $(tail -3 "$x/out")"; return; }
  "$cdag" record --merge "$x/dist" >"$x/out" 2>&1 || { fail "--merge: $(tail -3 "$x/out")"; return; }
  "$cdag" record --expand "$x/dist" -o "$x/exp" >"$x/out" 2>&1 || { fail "--expand: $(tail -3 "$x/out")"; return; }
  [ "$(ls "$x"/flat/ | grep -c '^phase-')" = "$(ls "$x"/exp/ | grep -c '^phase-')" ] ||
    fail "the flat merge wrote $(ls "$x"/flat/ | grep -c '^phase-') phase files, the expansion $(ls "$x"/exp/ | grep -c '^phase-')"
  for f in "$x"/flat/phase-*.cdag; do
    [ -e "$f" ] || continue
    cmp -s "$f" "$x/exp/${f##*/}" || { fail "${f##*/} differs from its expansion: $(diff "$f" "$x/exp/${f##*/}" | head -5)"; return; }
  done
}
