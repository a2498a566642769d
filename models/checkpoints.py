"""Trained weights on disk: checkpoints/<name>.safetensors plus checkpoints/manifest.json.

The manifest maps each checkpoint name to its entry: family, task, architecture config, seed,
data description, steps, wall time, metrics, size in bytes and sha256 of the weights file. A
fine-tune names the weights it started from by checkpoint name and sha256 (`init_from`); the
entries of weights that have since left the directory (superseded rounds, earlier versions of a
continued run) are kept in `lineage.json`, keyed by sha256, so `ancestry` can still tell a model's
whole history (the model cards print it) while the directory holds only what is used.
Writers update it under an exclusive lock on the checkpoint directory, so two trainings that
finish together both land. `load_model` rebuilds the model from its family and config and
refuses a missing file or one whose sha256 differs from the manifest.
"""

import contextlib
import fcntl
import hashlib
import importlib
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file
from torch import nn

CHECKPOINT_DIR = Path(__file__).resolve().parent.parent / "checkpoints"
MANIFEST_NAME = "manifest.json"
LINEAGE_NAME = "lineage.json"
MANIFEST_WIDTH = 100  # a value whose one-line JSON fits stays on one line

# family -> "module:Class"; the class builds itself with `from_config(config: dict)`
FAMILIES = {
    "pointer": "models.pointer:PointerNet",
    "attention-routing": "models.attention_routing:AttentionModel",
    "seq2seq": "models.seq2seq:Seq2Seq",
    "seq2seq-copy": "models.copy_translation:CopySeq2Seq",
}


class CheckpointError(RuntimeError):
    """A checkpoint is missing, unknown or does not match its manifest entry."""


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@contextlib.contextmanager
def _locked(directory: Path) -> Iterator[None]:
    """Exclusive lock on the directory itself, so no lock file is left behind."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def read_manifest(directory: Path = CHECKPOINT_DIR) -> dict[str, dict]:
    path = Path(directory) / MANIFEST_NAME
    if not path.exists():
        return {}
    return json.loads(path.read_text())


def read_lineage(directory: Path = CHECKPOINT_DIR) -> dict[str, dict]:
    """sha256 -> the entry of weights no longer in the directory (with its `checkpoint` name)."""
    path = Path(directory) / LINEAGE_NAME
    if not path.exists():
        return {}
    return json.loads(path.read_text())


def ancestry(entry: dict, directory: Path = CHECKPOINT_DIR) -> list[dict]:
    """The entries of the weights `entry` was fine-tuned from, nearest first, as far as the
    manifest and the lineage know them (each with its `checkpoint` name)."""
    manifest, lineage = read_manifest(directory), read_lineage(directory)
    by_sha = {e.get("sha256"): {"checkpoint": name, **e} for name, e in manifest.items()}
    by_sha |= lineage
    chain, parent, seen = [], entry.get("init_from"), set()
    while parent and parent.get("sha256") in by_sha and parent["sha256"] not in seen:
        seen.add(parent["sha256"])
        found = by_sha[parent["sha256"]]
        chain.append(found)
        parent = found.get("init_from")
    return chain


def _is_record(value: object) -> bool:
    """A dict of plain values (a config, a validation point): one line, however long."""
    return isinstance(value, dict) and not any(isinstance(v, dict | list) for v in value.values())


def manifest_json(value: object, indent: int = 0) -> str:
    """JSON for the manifest and the lineage: an entry's fields one per line, but a value that
    fits on a line, a list of plain values or a nested record stays on one, so a curve of 300
    validation points is 300 lines and the file reads (and diffs) entry by entry."""
    flat = json.dumps(value, ensure_ascii=False)
    plain_list = isinstance(value, list) and not any(isinstance(v, dict | list) for v in value)
    if (
        not isinstance(value, dict | list)
        or len(flat) + indent <= MANIFEST_WIDTH
        or plain_list
        or (indent > 2 and _is_record(value))
    ):
        return flat
    pad = " " * (indent + 2)
    if isinstance(value, dict):
        items = [
            f"{pad}{json.dumps(k, ensure_ascii=False)}: {manifest_json(v, indent + 2)}"
            for k, v in value.items()
        ]
        return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
    items = [pad + manifest_json(v, indent + 2) for v in value]
    return "[\n" + ",\n".join(items) + "\n" + " " * indent + "]"


def manifest_text(manifest: dict[str, dict]) -> str:
    return manifest_json(manifest) + "\n"


def update_manifest(directory: Path, name: str, entry: dict) -> None:
    """Add or replace one entry; other entries, written by other runs, are kept. Replaced
    weights (another sha256 under the name: a run continued and shipped again) go on in the
    lineage, so a model's ancestry still reaches them."""
    directory = Path(directory)
    with _locked(directory):
        manifest = read_manifest(directory)
        old = manifest.get(name)
        if old and old.get("sha256") and old["sha256"] != entry.get("sha256"):
            keep_in_lineage(directory, name, old)
        manifest[name] = entry
        tmp = directory / f".{MANIFEST_NAME}.{os.getpid()}.tmp"
        tmp.write_text(manifest_text(dict(sorted(manifest.items()))))
        tmp.replace(directory / MANIFEST_NAME)


LINEAGE_FIELDS = (
    "family",
    "steps",
    "batch_size",
    "instances_seen",
    "wall_time_s",
    "optimizer",
    "metrics",
    "init_from",
    "command",
)


def keep_in_lineage(directory: Path, name: str, entry: dict) -> None:
    """Record weights that leave the directory in its lineage.json, keyed by sha256."""
    lineage = read_lineage(directory)
    kept = {"sha256": entry["sha256"], "checkpoint": name}
    kept |= {k: entry[k] for k in LINEAGE_FIELDS if k in entry}
    replay = (entry.get("data") or {}).get("replay")
    if replay is not None:  # what the model card's "repeated" column reads
        kept["data"] = {"replay": replay}
    lineage[entry["sha256"]] = kept
    tmp = directory / f".{LINEAGE_NAME}.{os.getpid()}.tmp"
    tmp.write_text(manifest_text(lineage))
    tmp.replace(directory / LINEAGE_NAME)


def save_checkpoint(model: nn.Module, name: str, entry: dict, directory: Path) -> dict:
    """Write the weights and the manifest entry; return the entry with file, size and sha256."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.safetensors"
    state = {k: v.detach().contiguous() for k, v in model.state_dict().items()}
    tmp = directory / f".{name}.{os.getpid()}.tmp"
    save_file(state, tmp, metadata={"name": name, "family": entry["family"]})
    tmp.chmod(0o644)  # readable by the web server whichever user it runs as
    tmp.replace(path)
    entry = {**entry, "file": path.name, "size_bytes": path.stat().st_size}
    entry["sha256"] = sha256_file(path)
    update_manifest(directory, name, entry)
    return entry


def build_model(family: str, config: dict) -> nn.Module:
    if family not in FAMILIES:
        raise CheckpointError(f"Unknown model family {family!r}; known: {sorted(FAMILIES)}.")
    module_name, class_name = FAMILIES[family].split(":")
    cls = getattr(importlib.import_module(module_name), class_name)
    return cls.from_config(config)


def verified_file(entry: dict, directory: Path = CHECKPOINT_DIR) -> Path:
    """The path of a manifest entry's file, after checking it exists and matches its sha256."""
    path = Path(directory) / entry["file"]
    if not path.exists():
        raise CheckpointError(f"Checkpoint file {path} is missing; retrain or restore it.")
    actual = sha256_file(path)
    if actual != entry["sha256"]:
        raise CheckpointError(
            f"Checkpoint file {path} does not match its manifest entry "
            f"(sha256 {actual[:12]}… instead of {entry['sha256'][:12]}…); it is corrupt or stale."
        )
    return path


def load_model(name: str, directory: Path = CHECKPOINT_DIR) -> tuple[nn.Module, dict]:
    """The trained model (in eval mode) and its manifest entry, after checking sha256; a name
    "<recipe>@<step>" is a snapshot of the recipe's training (models/snapshots.py)."""
    directory = Path(directory)
    if "@" in name:
        return load_snapshot(name, directory)
    entry = read_manifest(directory).get(name)
    if entry is None:
        raise CheckpointError(
            f"No checkpoint named {name!r} in {directory / MANIFEST_NAME}; "
            f"train it with `python -m models.train {name}`."
        )
    path = verified_file(entry, directory)
    model = build_model(entry["family"], entry["config"])
    model.load_state_dict(load_file(path))
    model.eval()
    return model, entry


def install_checkpoint(source: Path, name: str, directory: Path = CHECKPOINT_DIR) -> dict:
    """Copy a finished run's checkpoint (trained with `--out source`) into `directory`, with
    its manifest entry; the weights are checked against that entry first."""
    source, directory = Path(source), Path(directory)
    load_model(name, source)  # raises CheckpointError on a missing or stale file
    entry = read_manifest(source)[name]
    tmp = directory / f".{name}.{os.getpid()}.tmp"
    tmp.write_bytes((source / entry["file"]).read_bytes())
    tmp.chmod(0o644)
    tmp.replace(directory / entry["file"])
    update_manifest(directory, name, entry)
    return entry


# ---- training snapshots: "<recipe>@<step>", kept by models/snapshots.py ----

SNAPSHOT_SCALE = ".scale"  # the key suffix of a matrix's row scales
SNAPSHOT_LEVELS = 7  # a matrix row's change is kept as integers in [-7, 7], two to a byte
# a snapshot's name, "pointer-hull@540"
SNAPSHOT_NAME = re.compile(r"(?P<recipe>[a-z0-9][a-z0-9.-]*)@(?P<step>\d{1,7})")


def snapshot_record(
    recipe_name: str, directory: Path = CHECKPOINT_DIR / "snapshots"
) -> dict | None:
    """A recipe's snapshots.json (its steps, files, sha256s, losses and metrics), or None
    when the recipe has no snapshot run."""
    path = directory / recipe_name / "snapshots.json"
    try:
        stamp = path.stat().st_mtime_ns
    except OSError:
        return None
    if (path, stamp) not in _snapshot_records:
        _snapshot_records[(path, stamp)] = json.loads(path.read_text())
    return _snapshot_records[(path, stamp)]


_snapshot_records: dict[tuple[Path, int], dict] = {}


def snapshot_entry(name: str, directory: Path = CHECKPOINT_DIR) -> dict | None:
    """The manifest-like entry of a snapshot named "<recipe>@<step>" (family, task, config,
    file, sha256, steps), or None when there is no such snapshot."""
    match = SNAPSHOT_NAME.fullmatch(name)
    run_record = snapshot_record(match["recipe"], directory / "snapshots") if match else None
    if match is None or run_record is None:
        return None
    step = int(match["step"])
    for kept in run_record["snapshots"]:
        if kept["step"] == step:
            return {
                "family": run_record["family"],
                "task": run_record["task"],
                "config": run_record["config"],
                "file": f"snapshots/{match['recipe']}/{kept['file']}",
                "sha256": kept["sha256"],
                "steps": step,
                "snapshot_of": match["recipe"],
            }
    return None


def load_snapshot(name: str, directory: Path = CHECKPOINT_DIR) -> tuple[nn.Module, dict]:
    """The snapshot "<recipe>@<step>" as its recipe's model (eval mode) and its entry. A
    snapshot file holds the change since the run's previous snapshot (models.snapshots.encode),
    so the weights are the sum of the run's files up to this step, each file's sha256 checked."""
    found = snapshot_entry(name, directory)
    if found is None:
        raise FileNotFoundError(f"no snapshot {name} under {directory / 'snapshots'}")
    folder = directory / "snapshots" / found["snapshot_of"]
    run_record = snapshot_record(found["snapshot_of"], directory / "snapshots")
    model = build_model(found["family"], found["config"])
    # a slider moves step by step: start from the last snapshot read back when it is earlier
    done, done_sha, state = _last_read.get(folder, (-1, "", {}))
    shas = {kept["step"]: kept["sha256"] for kept in run_record["snapshots"]}
    if done > found["steps"] or shas.get(done) != done_sha:  # later, or of files since rewritten
        done, state = -1, {key: torch.zeros_like(v) for key, v in model.state_dict().items()}
    for kept in run_record["snapshots"]:
        if kept["step"] > found["steps"]:
            break
        if kept["step"] <= done:
            continue
        path = folder / kept["file"]
        if sha256_file(path) != kept["sha256"]:
            raise ValueError(f"{path.name} does not match its sha256 in snapshots.json")
        state = apply_snapshot(state, load_file(path))
    _last_read[folder] = (found["steps"], found["sha256"], state)
    model.load_state_dict(state)
    return model.eval(), found


# a run's folder -> the snapshot last read back from it (its step, its file's sha256, its
# weights): one state per run, so the next step of a slider adds one file, not all before it
_last_read: dict[Path, tuple[int, str, dict[str, torch.Tensor]]] = {}


def apply_snapshot(
    state: dict[str, torch.Tensor], kept: dict[str, torch.Tensor]
) -> dict[str, torch.Tensor]:
    """The weights after one snapshot file: each matrix plus its packed row changes
    (scale · q, q in [-SNAPSHOT_LEVELS, SNAPSHOT_LEVELS]), each vector as the file has it."""
    out = {}
    for name, previous in state.items():
        if previous.ndim < 2:
            out[name] = kept[name].float()
            continue
        packed = kept[name]
        q = torch.stack([packed & 15, packed >> 4], dim=-1).reshape(packed.shape[0], -1)
        rows = previous.reshape(previous.shape[0], -1)
        q = q[:, : rows.shape[1]].float() - (SNAPSHOT_LEVELS + 1)
        out[name] = (rows + q * kept[name + SNAPSHOT_SCALE].float()[:, None]).reshape(
            previous.shape
        )
    return out


def main() -> None:
    """`python -m models.checkpoints install <run dir> <name>`: install a run's checkpoint."""
    import argparse

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("action", choices=["install"])
    parser.add_argument("source", type=Path, help="the run's --out directory")
    parser.add_argument("name", help="checkpoint name, e.g. pointer-tsp")
    parser.add_argument("--into", type=Path, default=CHECKPOINT_DIR)
    args = parser.parse_args()
    entry = install_checkpoint(args.source, args.name, args.into)
    print(f"installed {args.name}: {entry['steps']:,} steps, sha256 {entry['sha256'][:12]}…")


if __name__ == "__main__":
    main()
