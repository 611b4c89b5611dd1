#!/usr/bin/env bash
# Run torch_nan.py under the tool (through CUDA_INJECTION64_PATH) and list
# the kernels with findings. Usage: torch-check.sh TOOL OUTDIR
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
tool="$1"; out="$2"
printf '{"mode":"detect","kinds":15,"kernels":[],"exclude":[],"sample_every":1,"instr_range":null,"max_records":null,"report_path":"%s","events_socket":null,"dump_dir":null}\n' "$out/report-torch.json" > "$out/config-torch.json"
python3 "$here/torch_nan.py" > "$out/torch-plain.stdout" 2>&1
start=$(date +%s)
XFPX_CONFIG="$out/config-torch.json" CUDA_INJECTION64_PATH="$tool" \
    timeout 200 python3 "$here/torch_nan.py" > "$out/torch.stdout" 2> "$out/torch.stderr"
echo "torch exit $? after $(( $(date +%s) - start )) s; plain: $(cat "$out/torch-plain.stdout"); instrumented: $(cat "$out/torch.stdout")"
python3 - "$out/report-torch.json" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception as e:
    print("no torch report:", e); sys.exit(0)
print(f"torch: {len(r['kernels'])} kernels seen; notes: {r['run']['notes'][:3]}")
for k in r["kernels"]:
    if k["records"]:
        kinds = sorted({(x["kind"], x["format"]) for x in k["records"]})
        print(f"  {k['name'][:110]}: {len(k['records'])} records {kinds[:4]} (launches {k['launches']}, probes {k['probes']})")
PY
