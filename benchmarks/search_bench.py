"""How fast `plan --search` evaluates configurations: the default space (6 GPU types x TP 1-8 x PP 1-4 x
replicas x weights x KV dtype x 8 max_num_seqs values, up to 16 GPUs) for Llama-3.1-70B at 16
concurrent 8k-token requests. Prints candidates, wall and CPU seconds, candidates per second.

    .venv/bin/python benchmarks/search_bench.py [REPEATS]
"""
import json
import sys
import time

from multihead.planner import search as S
from multihead.cost.spec.lookup import find_model


def _config_and_id(name):
    """(raw config.json, `vllm serve` id) of a model name: the one model door."""
    found = find_model(name)
    return found.config, found.model_id


def main(repeats: int = 5) -> None:
    cfg, name = _config_and_id("meta-llama/Llama-3.1-70B-Instruct")
    work = S.Workload(input_len=8192, output_len=1024, concurrency=16, slo=S.parse_slo("tpot=50ms"))
    space = S.Space(gpus_max=16)
    runs = []
    for _ in range(repeats):
        w0, c0 = time.perf_counter(), time.process_time()
        r = S.search(cfg, name, work, space)
        runs.append((time.perf_counter() - w0, time.process_time() - c0))
    wall = sorted(w for w, _ in runs)
    cpu = sorted(c for _, c in runs)
    print(json.dumps({"candidates": r["candidates"], "wall_s_min": wall[0], "wall_s_median": wall[len(wall) // 2],
                      "cpu_s_median": cpu[len(cpu) // 2], "candidates_per_s": r["candidates"] / wall[0],
                      "loadavg": open("/proc/loadavg").read().split()[:3]}, indent=1))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
