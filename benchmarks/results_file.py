"""Results files as they are stored: those over 100 KB in benchmarks/results (JSON, JSONL, CSV)
are gzipped since s53 (`name.json.gz`), the rest plain. The scripts that read them open either
form through here."""
import gzip


def open_results(path):
    """A text handle on the results file at `path`, gunzipped where its name ends in .gz."""
    return gzip.open(path, "rt") if str(path).endswith(".gz") else open(path)
