# cdag tests — tests/cli/lib/expect.sh: the tables of the tests/cli/*.sh scripts (sourced, not run).
#
# A script sets cdag=$1 src=$2, sources this file, gives its expectations as tables
# (`cases <<'T' ... T`) and ends with `finish`. A table is a list of rows; a row is a line
#   STATUS COMMAND...
# (STATUS: the exit code COMMAND must give, or !0 for any failure) followed by indented
# lines, each one expectation on what COMMAND printed (one space after the kind; the rest of
# the line, leading and trailing blanks included, is the text):
#   out TEXT     standard output contains TEXT (a fixed string)
#   err TEXT     standard error contains TEXT
#   out! TEXT    standard output does not contain TEXT
#   out~ ERE     a line of standard output matches the extended regular expression ERE
#   out!~ ERE    no line of standard output matches ERE
#   err~ ERE     a line of standard error matches ERE
#   first TEXT   the first line of standard output contains TEXT
#   last TEXT    the last line of standard output is TEXT
#   count N ERE  exactly N lines of standard output match ERE
#   empty        standard output is empty
#   err1 TEXT    standard error holds TEXT exactly once (a message rank 0 alone prints)
#   NAME TEXT    a kind of the script's own: it defines kind_NAME, called with TEXT
# COMMAND runs through eval in the script's shell: `cdag` runs the binary under test,
# variables expand, quotes and redirections work, `VAR=value cdag ...` sets the environment
# of that run; its standard input is /dev/null unless it redirects it. Blank lines and lines
# starting with # are skipped. A malformed table (an expectation before any row, an unknown
# kind, no row at all) is a failure, so that a typo cannot make a check vanish. After a
# table, $tmp/out and $tmp/err hold the last row's output for checks a table cannot say.
# Scripts whose commands are shell functions with arrays (tests/exec/mpi/replay.sh,
# tests/record/*.sh) use the same checks one at a time: expect_status STATUS CMD...,
# then expect_out TEXT / expect_err TEXT.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

cdag() { "$cdag_bin" "$@"; }
cdag_bin=$cdag

last_cmd=""

# status WANT GOT: the last command (last_cmd) exited GOT; WANT is a code or !0.
status() {
  local want=$1 got=$2 cmd=$last_cmd
  case $want in
    '!0') [ "$got" -ne 0 ] || fail "'$cmd' exited 0, expected a failure" ;;
    *[!0-9]* | '') fail "table: '$want' is no exit status (row '$cmd')" ;;
    *) [ "$got" -eq "$want" ] || fail "'$cmd' exited $got, expected $want: $(head -c 300 "$tmp/err")" ;;
  esac
}

# row STATUS COMMAND: runs the command line COMMAND (eval), stdout to $tmp/out, stderr to
# $tmp/err; checks STATUS.
row() {
  last_cmd=$2
  eval "$2" </dev/null >"$tmp/out" 2>"$tmp/err"
  status "$1" $?
}

# expect_status STATUS CMD...: the same for a command given as words (no eval).
expect_status() {
  local want=$1
  shift
  last_cmd="$*"
  "$@" >"$tmp/out" 2>"$tmp/err"
  status "$want" $?
}
expect_out() { expect out "$1" "$last_cmd"; }
expect_err() { expect err "$1" "$last_cmd"; }

# expect KIND TEXT: one expectation on the last row's output (CMD names the row).
expect() {
  local kind=$1 text=$2 cmd=$3 n re
  case $kind in
    out) grep -qF -- "$text" "$tmp/out" || fail "'$cmd': stdout lacks '$text': $(head -c 300 "$tmp/out")" ;;
    err) grep -qF -- "$text" "$tmp/err" || fail "'$cmd': stderr lacks '$text': $(head -c 300 "$tmp/err")" ;;
    out!) ! grep -qF -- "$text" "$tmp/out" || fail "'$cmd': stdout holds '$text'" ;;
    out~) grep -qE -- "$text" "$tmp/out" || fail "'$cmd': no line of stdout matches /$text/: $(head -c 300 "$tmp/out")" ;;
    err~) grep -qE -- "$text" "$tmp/err" || fail "'$cmd': no line of stderr matches /$text/: $(head -c 300 "$tmp/err")" ;;
    out!~) ! grep -qE -- "$text" "$tmp/out" || fail "'$cmd': stdout matches /$text/: $(grep -E -- "$text" "$tmp/out" | head -2)" ;;
    first) head -n 1 "$tmp/out" | grep -qF -- "$text" || fail "'$cmd': first line '$(head -n 1 "$tmp/out")' lacks '$text'" ;;
    last) [ "$(tail -n 1 "$tmp/out")" = "$text" ] || fail "'$cmd': last line '$(tail -n 1 "$tmp/out")' is not '$text'" ;;
    count)
      n=${text%% *} re=${text#* }
      [ "$(grep -cE -- "$re" "$tmp/out")" = "$n" ] ||
        fail "'$cmd': $(grep -cE -- "$re" "$tmp/out") lines of stdout match /$re/, expected $n" ;;
    empty) [ ! -s "$tmp/out" ] || fail "'$cmd': stdout is not empty: $(head -c 300 "$tmp/out")" ;;
    err1)
      n=$(grep -cF -- "$text" "$tmp/err")
      [ "$n" = 1 ] || fail "'$cmd': stderr holds '$text' $n times, expected once: $(head -c 300 "$tmp/err")" ;;
    *)
      if declare -F "kind_$kind" >/dev/null; then "kind_$kind" "$text" "$cmd"
      else fail "table: unknown expectation '$kind' (after '$cmd')"; fi ;;
  esac
}

# cases: runs the table on standard input.
cases() {
  local line rest kind text cmd="" rows=0
  while IFS= read -r line; do
    rest=${line#"${line%%[![:space:]]*}"}   # without leading blanks
    [ -z "$rest" ] || [ "${rest:0:1}" = "#" ] && continue
    if [ "$rest" = "$line" ]; then   # not indented: a row
      cmd=${rest#* }
      row "${rest%% *}" "$cmd"
      rows=$((rows + 1))
    elif [ -z "$cmd" ]; then
      fail "table: expectation '$rest' before any row"
    else
      kind=${rest%% *}
      text=""
      [ "$kind" = "$rest" ] || text=${rest#* }
      expect "$kind" "$text" "$cmd"
    fi
  done
  [ "$rows" -gt 0 ] || fail "table: no rows"
}

finish() {
  [ "$fails" -eq 0 ] || { echo "$(basename "$0"): $fails failure(s)"; exit 1; }
  echo "$(basename "$0"): all expectations met"
}
