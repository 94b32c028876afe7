# Pieces the study runners share (sourced by run-embedded.sh and run-h200.sh; run from the repo root).

# study_points FILE PLANS_DIR [--set …]: compiles FILE's plans into PLANS_DIR and prints the names of
# the points STUDY_METHODS (an extended regex on the curriculum names) and STUDY_SEEDS (e.g. "1 2";
# empty: all) select, seed-major (every method's first seed first, so a study cut short still covers
# every method).
study_points() {
  local file=$1 plans=$2; shift 2
  ${TCOD:-node bin/tcod.mjs} compile "$file" --out "$plans" "$@" >/dev/null || return 1
  ls "$plans"/*.plan.json | sed 's#.*/##; s#\.plan\.json$##' | grep -E "^(${STUDY_METHODS:-[^/@]+})@" \
    | { if [ -n "${STUDY_SEEDS:-}" ]; then grep -E "run_seed=($(echo $STUDY_SEEDS | tr ' ' '|'))$"; else cat; fi; } \
    | awk -F'run_seed=' '{print $2 "\t" $0}' | sort -n -k1,1 -s | cut -f2-
}

# study_machine_json OUT PARALLEL DEADLINE [SETTING…]: OUT/machine.json — the machine, the Node.js, the
# runs at a time, the deadline, the load before, the start, TCOD_WORKER_ARGS where set, the settings.
study_machine_json() {
  node -e 'const fs = require("fs"), os = require("os"); const [out, parallel, deadline, ...settings] = process.argv.slice(1);
    fs.writeFileSync(out + "/machine.json", JSON.stringify({ cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model ?? "", node: process.version,
      parallel: Number(parallel), deadline: Number(deadline), loadBefore: os.loadavg().map((x) => x.toFixed(2)).join(" "),
      startedAt: new Date().toISOString(), ...(process.env.TCOD_WORKER_ARGS ? { worker: process.env.TCOD_WORKER_ARGS } : {}),
      settings: settings.map((s) => (/^[\w=.-]+$/.test(s) ? s : "'"'"'" + s + "'"'"'")).join(" ") }) + "\n");' "$@"
}
