#!/usr/bin/env bash
# Runs the package's unsafe code under valgrind's memcheck and fails on any error it reports
# (invalid reads or writes, uses of uninitialised memory, bad frees, and in the Rust unit tests
# memory definitely leaked). Installs nothing itself; it needs:
#   - valgrind on PATH (Debian: apt-get install valgrind);
#   - the built addon, codemode-executor.linux-x64-gnu.node (npm install && npm run build);
#   - cargo, to build the Rust unit-test binary (node scripts/cargo.js test --release --lib
#     --no-run; it reuses what npm test built).
#
#   bash scripts/sanitize.sh [unit] [thread] [process]     (no argument: all three)
#
# unit: the Rust unit tests (store, protocol, program, limits, bridge, allocator, ...); they
#   start no V8 isolate. Those of sandbox::spin and pool::watchdog are left out: they assert
#   windows of microseconds to milliseconds, which memcheck's slowdown misses without any memory
#   error (the thread CPU clocks they read run in the workload passes instead).
# thread, process: scripts/sanitize-workload.js through the addon in each isolation mode, which
#   reaches the unsafe code the unit tests cannot (napi and libuv in src/api and src/uv.rs, V8's
#   GC and heap-limit callbacks, the ArrayBuffer allocator, module loading, the engine process's
#   pipes); in process mode the engine child is traced too.
# scripts/sanitize.supp holds the only suppressions: V8's conservative stack scan.
set -euo pipefail
cd "$(dirname "$0")/.."

need() { echo "sanitize: $1" >&2; exit 2; }
command -v valgrind >/dev/null 2>&1 || need "valgrind is not installed (Debian: apt-get install valgrind)"
command -v node >/dev/null 2>&1 || need "node is not installed"

passes=("$@")
[ ${#passes[@]} -eq 0 ] && passes=(unit thread process)
for pass in "${passes[@]}"; do
  case "$pass" in unit | thread | process) ;; *) need "unknown pass '$pass' (unit, thread, process)" ;; esac
done

logs="$(mktemp -d "${TMPDIR:-/tmp}/codemode-sanitize.XXXXXX")"
trap 'rm -rf "$logs"' EXIT
common=(--tool=memcheck --num-callers=24 --suppressions=scripts/sanitize.supp --error-exitcode=99)
failed=0
last_bad=0
started=$SECONDS

# Runs one pass under memcheck, one log per process, and fails it when the command fails or any
# traced process reported an error.
run_pass() {
  local name="$1"
  shift
  local t0=$SECONDS status=0
  rm -rf "${logs:?}/$name"
  mkdir -p "$logs/$name"
  valgrind "${common[@]}" --log-file="$logs/$name/memcheck.%p.log" "$@" || status=$?
  local bad=0
  for log in "$logs/$name"/memcheck.*.log; do
    if ! grep -q "ERROR SUMMARY: 0 errors" "$log"; then
      bad=1
      cat "$log" >&2
    fi
  done
  last_bad=$bad
  if [ "$status" -ne 0 ] || [ "$bad" -ne 0 ]; then
    echo "sanitize: $name FAILED (exit $status; memcheck errors: $([ $bad -ne 0 ] && echo yes || echo none)) in $((SECONDS - t0)) s" >&2
    failed=1
  else
    echo "sanitize: $name clean ($(ls "$logs/$name" | wc -l) process(es), $((SECONDS - t0)) s)"
  fi
}

for pass in "${passes[@]}"; do
  case "$pass" in
    unit)
      exe="$(node scripts/cargo.js test --release --lib --no-run --message-format=json |
        node -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
          for (const line of s.split("\n")) {
            if (!line.startsWith("{")) continue;
            const m = JSON.parse(line);
            if (m.reason === "compiler-artifact" && m.profile && m.profile.test && m.executable) console.log(m.executable);
          }
        })' | tail -n 1)"
      [ -n "$exe" ] || need "cargo built no unit-test binary"
      run_pass unit --leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite \
        "$exe" --skip sandbox::spin --skip pool::watchdog
      ;;
    thread | process)
      [ -f codemode-executor.linux-x64-gnu.node ] || need "the addon is not built (npm run build)"
      # --smc-check: V8 writes the code it then runs.
      earlier_failed=$failed
      failed=0
      run_pass "$pass" --smc-check=all-non-file --trace-children=yes \
        node scripts/sanitize-workload.js "$pass"
      # A workload check that failed with no memory error (memcheck slows everything tens of
      # times, and a loaded machine more: one run out of many reported the wrong stop reason
      # once) is run once more; its report stays above in the log, and the pass fails if the
      # second try fails too. A memory error is never retried.
      if [ "$failed" -ne 0 ] && [ "$last_bad" -eq 0 ]; then
        echo "sanitize: $pass failed without a memory error; running it once more" >&2
        failed=0
        run_pass "$pass" --smc-check=all-non-file --trace-children=yes \
          node scripts/sanitize-workload.js "$pass"
      fi
      failed=$((failed | earlier_failed))
      ;;
  esac
done

echo "sanitize: done in $((SECONDS - started)) s"
exit "$failed"
