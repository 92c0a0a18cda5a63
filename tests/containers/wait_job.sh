# Sourced by the container tests (run.sh, k8s.sh) after they define `cli`
# (the operator's fedmf in the federation, a shell function) and `fail`.
# wait_job JOB_ID: prints the job's final status (JSON) once it FINISHED;
# fails when it ended otherwise. `fedmf job watch` follows the job and exits 0
# only when it finished; the test's ctest TIMEOUT bounds the wait.
wait_job() {
  local out
  out=$(cli job watch --server server:7443 --job "$1" --interval 2 2>&1) ||
    fail "job $1 did not finish: $out"
  cli job status --server server:7443 --job "$1" --json || fail "status of job $1"
}
