#!/bin/bash
# Runs MPICH's own MPI-IO test programs, built unmodified from a
# pmodels/mpich git snapshot, against MPICH's MPI-IO and through flowio's
# MPI-IO layer (LD_PRELOAD of libflowio_mpiio.so), and prints a table:
#
#   tools/run_mpich_io_tests.sh [--ref REF] [--newer-ref REF] [--work DIR] [--heavy]
#                               [--only a,b,...] [--timeout SECONDS] [--layer PATH]
#
# The programs are test/mpi/io (MPICH's test suite, with its MTest helper
# library) and src/mpi/romio/test (ROMIO's own, C and Fortran) of the git
# ref REF (default v4.0.2, the MPICH installed here) of the bare repository
# $MPICH_GIT (default /work/.mirror/pmodels+mpich/repo); a program REF does
# not have (large_count came with 4.3) comes from --newer-ref (default
# v4.3.2), built against the same installed MPICH. They are extracted
# with `git archive` into DIR (default /work/mpich-tests, outside any
# repository), configured the way MPICH's configure would (the two
# generated headers of the test suite, the @...@ values of ROMIO's .in
# files), built with mpicc/mpif77 and run with the rank counts and
# arguments of MPICH's testlist and ROMIO's runtests, each in an empty
# directory of its own, once per side.
#
# A program passes when it exits 0 and its self-check holds: "No Errors"
# printed (and no "Found N errors"), or for the programs that only print
# figures (perf, coll_perf, large_array, large_file, fperf) no error
# message, or for external32 (which prints what it found) the same output
# as MPICH's run. The last column says whether flowio's layer served the
# run (FLOWIO_MPIIO_REPORT=1). The exit status is 1 when a program fails
# through the layer where it passes on MPICH.
#
# --heavy adds the programs that need several GiB of memory (bigtype and
# i_bigtype: 6.5 GiB; large_count: 4.6 GB plus a 4.6 GB file, one rank;
# large_array: 4 GiB plus a 4 GiB file; coll_perf: a 14 GiB darray, 7 GiB
# per process on 2 ranks). They are left out by default: this machine is
# shared; run them one at a time (--only). Not part of the CI suite (it
# takes minutes; tests/scale has programs in their spirit, sized for CI);
# run it by hand. Needs the layer built first:
#   bazel build //api/mpiio:libflowio_mpiio.so
set -uo pipefail

repo_root=$(cd "$(dirname "$0")/.." && pwd)
ref=v4.0.2
newer_ref=v4.3.2
work=/work/mpich-tests
heavy=0
only=""
timeout=300
layer="$repo_root/bazel-bin/api/mpiio/libflowio_mpiio.so"
mpich_git=${MPICH_GIT:-/work/.mirror/pmodels+mpich/repo}

while [ $# -gt 0 ]; do
  case $1 in
    --ref) ref=$2; shift 2 ;;
    --newer-ref) newer_ref=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --heavy) heavy=1; shift ;;
    --only) only=",$2,"; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    --layer) layer=$2; shift 2 ;;
    *) sed -n '2,38p' "$0"; exit 2 ;;
  esac
done
if [ ! -f "$layer" ]; then
  echo "the layer $layer is missing: bazel build //api/mpiio:libflowio_mpiio.so" >&2
  exit 2
fi
layer=$(realpath "$layer")

# Each program: suite name ranks check heavy args...
#   check: noerrors | quiet (no error printed) | same (stdout as MPICH's)
# Arguments: FILE stands for the test file's path.
programs=(
  "mpi/io rdwrord 4 noerrors 0"
  "mpi/io rdwrzero 4 noerrors 0"
  "mpi/io getextent 2 noerrors 0"
  "mpi/io setinfo 4 noerrors 0"
  "mpi/io setviewcur 4 noerrors 0"
  "mpi/io i_noncontig 2 noerrors 0"
  "mpi/io async 4 noerrors 0"
  "mpi/io async_any 4 noerrors 0"
  "mpi/io userioerr 1 noerrors 0"
  "mpi/io resized 1 noerrors 0"
  "mpi/io resized2 1 noerrors 0"
  "mpi/io bigtype 1 noerrors 1"
  "mpi/io hindexed_io 1 noerrors 0"
  "mpi/io tst_fileview 1 noerrors 0"
  "mpi/io zero_count 4 noerrors 0"
  "mpi/io simple_collective 1 noerrors 0 FILE"
  "mpi/io external32_derived_dtype 1 noerrors 0"
  "mpi/io i_bigtype 1 noerrors 1"
  "mpi/io large_count 1 noerrors 1 FILE"
  "mpi/io i_hindexed_io 1 noerrors 0"
  "mpi/io i_rdwrord 4 noerrors 0"
  "mpi/io i_setviewcur 4 noerrors 0"
  "mpi/io i_aggregation1 4 noerrors 0"
  "mpi/io i_aggregation2 4 noerrors 0"
  "mpi/io i_coll_test 4 noerrors 0"
  "mpi/io i_darray_read 4 noerrors 0"
  "mpi/io i_hindexed 4 noerrors 0"
  "mpi/io i_noncontig_coll 2 noerrors 0"
  "mpi/io i_noncontig_coll2 4 noerrors 0"
  "mpi/io i_types_with_zeros 2 noerrors 0"
  "romio simple 4 noerrors 0 -fname FILE"
  "romio async 4 noerrors 0 -fname FILE"
  "romio async-multiple 4 noerrors 0 -fname FILE"
  "romio atomicity 4 noerrors 0 -fname FILE"
  "romio coll_test 4 noerrors 0 -fname FILE"
  "romio excl 4 noerrors 0 -fname FILE"
  "romio file_info 4 noerrors 0 -fname FILE"
  "romio i_noncontig 2 noerrors 0 -fname FILE"
  "romio noncontig 2 noerrors 0 -fname FILE"
  "romio noncontig_coll 2 noerrors 0 -fname FILE"
  "romio noncontig_coll2 4 noerrors 0 -fname FILE"
  "romio aggregation1 4 noerrors 0 -h -f FILE"
  "romio aggregation2 4 noerrors 0 FILE"
  "romio hindexed 4 noerrors 0 FILE"
  "romio misc 4 noerrors 0 -fname FILE"
  "romio shared_fp 4 noerrors 0 -fname FILE"
  "romio ordered_fp 4 noerrors 0 -fname FILE"
  "romio split_coll 4 noerrors 0 -fname FILE"
  "romio psimple 4 noerrors 0 -fname FILE"
  "romio error 1 noerrors 0 -fname FILE"
  "romio status 1 noerrors 0 -fname FILE"
  "romio types_with_zeros 2 noerrors 0 FILE"
  "romio darray_read 4 noerrors 0 FILE"
  "romio syshints 1 noerrors 0 HINTFILE"
  "romio creat_excl 4 noerrors 0 -fname FILE"
  "romio big_extents 2 noerrors 0 FILE"
  "romio external32 2 same 0"
  "romio perf 2 quiet 0 -fname FILE"
  "romio large_file 1 quiet 0 -fname FILE"
  "romio large_array 2 quiet 1 -fname FILE"
  "romio coll_perf 2 quiet 1 -fname FILE"
  "romio fmisc 4 noerrors 0 -fname FILE"
  "romio fcoll_test 4 noerrors 0 -fname FILE"
  "romio pfcoll_test 4 noerrors 0 -fname FILE"
  "romio fperf 2 quiet 0 -fname FILE"
)

selected() {
  local name=$1 is_heavy=$2
  if [ -n "$only" ]; then
    [[ $only == *",$name,"* ]]
    return
  fi
  [ "$is_heavy" = 0 ] || [ "$heavy" = 1 ]
}

# ---- extract and configure ------------------------------------------------
# extract REF: the test sources of REF in $work/src-REF (once).
extract() {
  local into="$work/src-$1"
  [ -d "$into" ] && return 0
  mkdir -p "$into"
  if ! git -C "$mpich_git" archive "$1" test/mpi/io test/mpi/include test/mpi/util \
      src/mpi/romio/test | tar -x -C "$into"; then
    echo "cannot extract $1 from $mpich_git" >&2
    rm -rf "$into"
    return 1
  fi
}
extract "$ref" || exit 2
src="$work/src-$ref"
build="$work/build-$ref"
mkdir -p "$build/gen" "$build/bin"
log="$build/build.log"
: >"$log"

# What test/mpi's configure generates: its config header (only what the
# io tests and the MTest library look at) and mtest_mpix.h (empty for a
# build against MPICH, whose mpi.h declares the MPIX names itself).
cat >"$build/gen/mpitestconf.h" <<'EOF'
#define HAVE_STRING_H 1
#define HAVE_STDLIB_H 1
#define HAVE_STDINT_H 1
#define HAVE_INTTYPES_H 1
#define HAVE_UNISTD_H 1
#define HAVE_STDARG_H 1
#define HAVE_SYS_TIME_H 1
#define HAVE_SYS_RESOURCE_H 1
#define HAVE_GETRUSAGE 1
#define HAVE_MPI_WIN_CREATE 1
#define HAVE_MPI_INIT_THREAD 1
#define HAVE_MPI_IO 1
#define HAVE_LONG_DOUBLE 1
#define HAVE_LONG_LONG 1
#define THREAD_PACKAGE_NAME THREAD_PACKAGE_NONE
EOF
printf '#ifndef MTEST_MPIX_H_INCLUDED\n#define MTEST_MPIX_H_INCLUDED\n#endif\n' \
  >"$build/gen/mtest_mpix.h"

mpi_include="$src/test/mpi/include"
mtest_objects=()
for unit in mtest mtest_common mtest_single; do
  object="$build/gen/$unit.o"
  if [ ! -f "$object" ]; then
    mpicc -w -O1 -I"$mpi_include" -I"$build/gen" -c "$src/test/mpi/util/$unit.c" -o "$object" \
      >>"$log" 2>&1 || { echo "cannot build MTest ($unit.c); see $log" >&2; exit 2; }
  fi
  mtest_objects+=("$object")
done

# ROMIO's configure values for this platform (64-bit MPI_Offset, gfortran).
romio_substitute() {
  sed -e 's/@LL@/lld/g' -e 's/@F77GETARG@/call getarg(i,str)/g' -e 's/@F77IARGC@/iargc()/g' \
    -e 's/@F77MPIOINC@//g' -e 's/@FORTRAN_MPI_OFFSET@/integer*8/g' "$1"
}

# build SUITE NAME: prints nothing, returns 0 when $build/bin/SUITE-NAME exists.
build_program() {
  local suite=$1 name=$2 out="$build/bin/${1//\//_}-$2"
  [ -x "$out" ] && return 0
  if [ "$suite" = mpi/io ]; then
    local source="$src/test/mpi/io/$name.c"
    if [ ! -f "$source" ]; then
      extract "$newer_ref" >>"$log" 2>&1 || return 1
      source="$work/src-$newer_ref/test/mpi/io/$name.c"
      [ -f "$source" ] || { echo "no source for $suite/$name" >>"$log"; return 1; }
    fi
    mpicc -w -O1 -I"$mpi_include" -I"$build/gen" "$source" \
      "${mtest_objects[@]}" -o "$out" >>"$log" 2>&1
    return
  fi
  local dir="$src/src/mpi/romio/test"
  if [ -f "$dir/$name.c" ]; then
    mpicc -w -O1 "$dir/$name.c" -o "$out" >>"$log" 2>&1
  elif [ -f "$dir/$name.c.in" ]; then
    romio_substitute "$dir/$name.c.in" >"$build/gen/$name.c"
    mpicc -w -O1 "$build/gen/$name.c" -o "$out" >>"$log" 2>&1
  elif [ -f "$dir/$name.f.in" ]; then
    romio_substitute "$dir/$name.f.in" >"$build/gen/$name.f"
    mpif77 -w -O1 "$build/gen/$name.f" -o "$out" >>"$log" 2>&1
  else
    echo "no source for $suite/$name" >>"$log"
    return 1
  fi
}

# ---- run ------------------------------------------------------------------
runs="$work/runs-$ref"
rm -rf "$runs"
mkdir -p "$runs"

# run_side LABEL SUITE NAME RANKS ARGS...: runs in $runs/SUITE-NAME/LABEL;
# records status, seconds, stdout+stderr.
run_side() {
  local label=$1 suite=$2 name=$3 ranks=$4
  shift 4
  local dir="$runs/${suite//\//_}-$name/$label"
  mkdir -p "$dir"
  local args=() arg
  for arg in "$@"; do
    case $arg in
      FILE) args+=("$dir/testfile") ;;
      HINTFILE) args+=("$src/src/mpi/romio/test/test_hintfile") ;;
      *) args+=("$arg") ;;
    esac
  done
  local env_args=(-genv FLOWIO_MPIIO_REPORT 1)
  [ "$label" = flowio ] && env_args+=(-genv LD_PRELOAD "$layer")
  local begin end status=0
  begin=$(date +%s.%N)
  (cd "$dir" && MPIEXEC_TIMEOUT=$timeout mpiexec -n "$ranks" "${env_args[@]}" \
    "$build/bin/${suite//\//_}-$name" "${args[@]}" >"$dir/output" 2>&1) || status=$?
  end=$(date +%s.%N)
  echo "$status" >"$dir/status"
  awk -v b="$begin" -v e="$end" 'BEGIN { printf "%.1f", e - b }' >"$dir/seconds"
  # The test files can be large: keep only the outputs.
  find "$dir" -mindepth 1 -maxdepth 1 ! -name output ! -name status ! -name seconds \
    -exec rm -rf {} +
}

# verdict LABEL SUITE NAME CHECK: pass or FAIL(reason)
verdict() {
  local dir="$runs/${2//\//_}-$3/$1" check=$4
  local status
  status=$(cat "$dir/status")
  if [ "$status" != 0 ]; then
    echo "FAIL(exit $status)"
    return
  fi
  case $check in
    noerrors)
      if grep -Eq 'Found +[1-9][0-9]* +errors?' "$dir/output" || ! grep -qi 'no errors' "$dir/output"; then
        echo "FAIL(check)"
        return
      fi
      ;;
    quiet)
      if grep -Eiq '(^|[^a-z_])error' "$dir/output"; then
        echo "FAIL(error printed)"
        return
      fi
      ;;
    same)
      local mpich_dir="$runs/${2//\//_}-$3/mpich"
      if ! diff -q <(grep -v '^flowio-mpiio:' "$mpich_dir/output") \
          <(grep -v '^flowio-mpiio:' "$dir/output") >/dev/null; then
        echo "FAIL(output differs)"
        return
      fi
      ;;
  esac
  echo pass
}

printf '%-7s %-26s %5s %-9s %-22s %-22s %s\n' suite program ranks check MPICH flowio served
regressions=0
total=0
for entry in "${programs[@]}"; do
  read -r suite name ranks check is_heavy args <<<"$entry"
  selected "$name" "$is_heavy" || continue
  total=$((total + 1))
  if ! build_program "$suite" "$name"; then
    printf '%-7s %-26s %5s %-9s %-22s %-22s\n' "$suite" "$name" "$ranks" "$check" \
      "not built" "not built"
    continue
  fi
  # shellcheck disable=SC2086
  run_side mpich "$suite" "$name" "$ranks" $args
  # shellcheck disable=SC2086
  run_side flowio "$suite" "$name" "$ranks" $args
  base="$runs/${suite//\//_}-$name"
  mpich=$(verdict mpich "$suite" "$name" "$check")
  flowio=$(verdict flowio "$suite" "$name" "$check")
  served=$(grep -ho 'flowio-mpiio: served [0-9]*' "$base/flowio/output" | awk '{s += $3} END {print s + 0}')
  printf '%-7s %-26s %5s %-9s %-22s %-22s %s\n' "$suite" "$name" "$ranks" "$check" \
    "$mpich $(cat "$base/mpich/seconds")s" "$flowio $(cat "$base/flowio/seconds")s" "$served"
  if [ "$mpich" = pass ] && [ "$flowio" != pass ]; then
    regressions=$((regressions + 1))
  fi
done
echo "programs=$total flowio_fails_where_mpich_passes=$regressions outputs=$runs"
[ "$regressions" -eq 0 ]
