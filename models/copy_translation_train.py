"""Train the copy-capable translation model (models/copy_translation.py), resumably.

    python -m models.copy_translation_train train --alpha 1.5 --run a1.5 [--steps N]
        [--stop-after-min M] [--resume]
    python -m models.copy_translation_train export --run a1.5 --name seq2seq-translate-copy-a1.5
    python -m models.evaluate seq2seq --tables copy   # the copy table, beside the generate-only

Fine-tuned from the served generate-only big model at the same α (`--init-from`, by default
checkpoints/seq2seq-translate-big-a<α>-replay.safetensors): every shared parameter starts from
it, the copy parameters fresh. Training data: corpus v2's training split plus template
sentences whose placeholders are drawn from the training values of models/tasks/copy_testset.py
(disjoint from its dev and test values by construction).

The run lives in data/copy-translation/<run>/: state.pt (model, optimizer, step, RNG, curve;
written atomically every few minutes and at every validation) and curve.json. Batch k depends
only on (seed, k), so `--resume` continues exactly where the state was saved: a run outlives
its session. `export_safetensors` turns a state into weights plus the fields of a manifest
entry.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shlex
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import sentencepiece as spm
import torch
from safetensors.torch import load_file, save_file
from torch import nn

from models.checkpoints import CHECKPOINT_DIR, read_manifest, sha256_file, update_manifest
from models.copy_translation import (
    CopyConfig,
    CopyExampleIds,
    CopySeq2Seq,
    collate,
    detokenize,
    greedy_decode_pieces,
    init_from_generate_only,
    source_pieces,
)
from models.tasks import translation
from models.tasks.copy_testset import (
    COPY_TESTSET_VERSION,
    DEV_SEED,
    CopyExample,
    copy_fidelity,
    corpus_copy_examples,
    corpus_splits,
    template_examples,
)
from models.tasks.translation_tokenizers import MAX_TOKENS, load_tokenizers, max_output_length
from models.train import learning_rate

ROOT = Path(__file__).resolve().parent.parent
RUN_DIR = ROOT / "data" / "copy-translation"
TRAIN_TEMPLATE_SEED = 40_003
CORPUS = "v2"


# --- data ----------------------------------------------------------------------------------------


def training_examples(
    pairs: Sequence[tuple[str, str]],
    source_sp: spm.SentencePieceProcessor,
    target_sp: spm.SentencePieceProcessor,
    split_numbers: bool = False,
    spans: bool = False,
) -> list[CopyExampleIds]:
    out = []
    for source, target in pairs:
        if len(source_sp.encode(source)) > MAX_TOKENS:
            continue
        example = CopyExampleIds.build(source, target, source_sp, target_sp, split_numbers, spans)
        if len(example.src) <= MAX_TOKENS and len(example.target_keys) <= MAX_TOKENS + 1:
            out.append(example)
    return out


def batch_indices(
    lengths: Sequence[int], batch_size: int, seed: int, start_step: int
) -> Iterator[list[int]]:
    """Infinite batches of example indices of similar source length, in seeded epochs: batch k
    depends only on (seed, k), so a resumed run replays nothing (as
    models.seq2seq.length_bucketed_batches)."""
    per_epoch = max(1, len(lengths) // batch_size)
    epoch, offset = divmod(start_step, per_epoch)
    while True:
        generator = torch.Generator().manual_seed(seed * 1_009 + epoch)
        order = torch.randperm(len(lengths), generator=generator).tolist()
        window = 50 * batch_size
        batches = []
        for start in range(0, per_epoch * batch_size, window):
            chunk = sorted(order[start : start + window], key=lambda i: lengths[i])
            batches += [chunk[i : i + batch_size] for i in range(0, len(chunk), batch_size)]
        shuffled = torch.randperm(len(batches), generator=generator).tolist()
        for index in shuffled[offset:]:
            yield batches[index]
        epoch, offset = epoch + 1, 0


# --- the run -------------------------------------------------------------------------------------


@dataclass
class RunState:
    step: int = 0
    elapsed_s: float = 0.0
    smoothed_loss: float | None = None
    curve: list[dict] = field(default_factory=list)
    resumes: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class Plan:
    steps: int  # the cosine schedule's length
    batch_size: int
    lr: float
    warmup: int
    seed: int
    clip: float = 2.0


def train_steps(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    examples: Sequence[CopyExampleIds],
    state: RunState,
    plan: Plan,
    until_step: int,
    should_stop=lambda: False,
    on_step=lambda: None,
) -> None:
    """Advance `state.step` to `until_step` (or until should_stop()), one Adam step per batch."""
    batches = batch_indices([len(e.src) for e in examples], plan.batch_size, plan.seed, state.step)
    model.train()
    while state.step < until_step and not should_stop():
        for group in optimizer.param_groups:
            group["lr"] = learning_rate(plan.lr, state.step, plan.warmup, state.step / plan.steps)
        loss = model(collate([examples[i] for i in next(batches)]))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), plan.clip)
        optimizer.step()
        state.step += 1
        value = loss.item()
        previous = state.smoothed_loss
        state.smoothed_loss = value if previous is None else 0.98 * previous + 0.02 * value
        on_step()


def save_state(
    path: Path, model: nn.Module, optimizer: torch.optim.Optimizer, state: RunState, meta: dict
) -> None:
    """Everything a resume needs, written atomically (torch.save: this file is ours)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    torch.save(
        {
            "model": model.state_dict(),
            "optimizer": optimizer.state_dict(),
            "state": asdict(state),
            "rng": torch.get_rng_state(),
            "python_rng": random.getstate(),
            "meta": meta,
        },
        tmp,
    )
    tmp.replace(path)
    curve = path.with_name("curve.json")
    tmp_curve = curve.with_name(f".curve.json.{os.getpid()}.tmp")
    tmp_curve.write_text(json.dumps(state.curve, indent=1))
    tmp_curve.replace(curve)


def load_state(
    path: Path, model: nn.Module, optimizer: torch.optim.Optimizer | None = None
) -> tuple[RunState, dict]:
    saved = torch.load(path, weights_only=True)
    model.load_state_dict(saved["model"])
    if optimizer is not None:
        optimizer.load_state_dict(saved["optimizer"])
        torch.set_rng_state(saved["rng"])
        random.setstate(saved["python_rng"])
    return RunState(**saved["state"]), saved["meta"]


# --- validation ----------------------------------------------------------------------------------


def copy_translations(
    model: CopySeq2Seq,
    source_sp: spm.SentencePieceProcessor,
    target_sp: spm.SentencePieceProcessor,
    sentences: Sequence[str],
) -> list[str]:
    """Greedy translations by the copy model, 64 sentences a batch."""
    model.eval()
    out = []
    for start in range(0, len(sentences), 64):
        pieces = [
            source_pieces(s, source_sp, model.config.split_numbers)[:MAX_TOKENS]
            for s in sentences[start : start + 64]
        ]
        max_len = max_output_length(max(len(p) for p in pieces))
        decoded = greedy_decode_pieces(model, pieces, source_sp, target_sp, max_len)
        out += [detokenize(p) for p in decoded]
    return out


def bleu(hypotheses: Sequence[str], references: Sequence[str]) -> float:
    import sacrebleu

    return round(sacrebleu.corpus_bleu(list(hypotheses), [list(references)]).score, 2)


@dataclass
class DevSets:
    """What a validation decodes: a fixed sample of dev pairs (BLEU), the dev pairs that keep a
    source token, and template sentences with dev values (copy fidelity)."""

    bleu_pairs: list
    corpus_copy: list[CopyExample]
    templates: list[CopyExample]

    @classmethod
    def build(cls, dev: Sequence, bleu_count: int, template_count: int) -> DevSets:
        rng = random.Random(DEV_SEED)
        return cls(
            rng.sample(list(dev), min(bleu_count, len(dev))),
            corpus_copy_examples(dev),
            template_examples("dev", template_count, DEV_SEED),
        )

    def validate(self, translate) -> dict[str, float]:
        hypotheses = translate([p.source for p in self.bleu_pairs])
        copy_sets = self.corpus_copy + self.templates
        outputs = translate([e.source for e in copy_sets])
        return {
            "dev_bleu_greedy": bleu(hypotheses, [p.target for p in self.bleu_pairs]),
            **{f"dev_{k}": v for k, v in copy_fidelity(copy_sets, outputs).items()},
        }


# --- commands ------------------------------------------------------------------------------------


def default_init(alpha: float) -> Path:
    return CHECKPOINT_DIR / f"seq2seq-translate-big-a{alpha:.3g}-replay.safetensors"


def init_info(path: Path) -> dict:
    """What the metadata records about the generate-only weights the run starts from."""
    info: dict = {"file": str(path.relative_to(ROOT)), "sha256": sha256_file(path)}
    for name, entry in read_manifest(path.parent).items():
        if entry.get("file") == path.name and entry.get("sha256") == info["sha256"]:
            info |= {"checkpoint": name, "config": entry["config"]}
            info |= {k: entry.get(k) for k in ("steps", "instances_seen", "wall_time_s")}
            info["metrics"] = entry.get("metrics")
    return info


def data_description(
    corpus_pairs: int, template_pairs: int, examples: int, word_names: float = 0.0
) -> dict:
    words = (
        f"; {word_names:.0%} of the names made of one or two English words "
        "(models.tasks.copy_testset.english_words)"
        if word_names
        else ""
    )
    return {
        "corpus": CORPUS,
        "corpus_pairs": corpus_pairs,
        "template_pairs": template_pairs,
        "templates": "models/tasks/copy_testset.py TEMPLATES not marked test_only, values "
        "drawn from the training split of value_split (sha256 of the value: 70% train, 10% "
        f"dev, 20% test), seed {TRAIN_TEMPLATE_SEED}{words}; disjoint from the dev and test "
        "values",
        "target_pieces": "a target word the source holds verbatim is written in the source's "
        "pieces (models.copy_translation.target_pieces); others with the target tokenizer",
        "training_examples": examples,
        "copy_testset_version": COPY_TESTSET_VERSION,
    }


def train_command(args: argparse.Namespace) -> None:
    torch.set_num_threads(args.threads)
    run_dir = RUN_DIR / args.run
    state_path = run_dir / "state.pt"
    source_sp, target_sp = load_tokenizers(corpus=CORPUS)
    init_path = Path(args.init_from) if args.init_from else default_init(args.alpha)
    init_path = init_path if init_path.exists() else CHECKPOINT_DIR / f"{init_path}.safetensors"
    base = init_info(init_path)
    config = CopyConfig(
        **base["config"]
        | {
            "attn_alpha": args.alpha,
            "out_alpha": args.alpha,
            "split_numbers": args.split_numbers,
            "copy_spans": args.copy_spans,
        }
    )
    torch.manual_seed(args.seed)
    model = CopySeq2Seq(config)
    fresh = init_from_generate_only(model, load_file(init_path))
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    plan = Plan(args.steps, args.batch_size, args.lr, args.warmup, args.seed)
    state, saved_meta = RunState(), None
    if args.resume and state_path.exists():
        state, saved_meta = load_state(state_path, model, optimizer)
        if saved_meta["plan"] != asdict(plan):
            sys.exit(f"--resume: the saved plan {saved_meta['plan']} differs from {asdict(plan)}")
        state.resumes.append(state.step)
        print(f"resumed at step {state.step}", flush=True)
    elif state_path.exists():
        sys.exit(f"{state_path} exists: pass --resume, or another --run")
    splits = corpus_splits(CORPUS)
    started = time.time()
    templates = template_examples(
        "train", args.template_pairs, TRAIN_TEMPLATE_SEED, args.word_names
    )
    pairs = [(p.source, p.target) for p in splits["train"]]
    pairs += [(e.source, e.target) for e in templates]
    frequent = (
        translation.frequent_training_pairs(CORPUS, args.replay_frequent)
        if args.replay_frequent
        else []
    )
    pairs += [(p.source, p.target) for p in frequent] * args.replay_copies
    examples = training_examples(pairs, source_sp, target_sp, args.split_numbers, args.copy_spans)
    dev = DevSets.build(splits["dev"], args.dev_pairs, args.dev_templates)
    print(f"{len(examples)} training examples in {time.time() - started:.0f} s", flush=True)
    meta = {
        "alpha": args.alpha,
        "plan": asdict(plan),
        "config": asdict(config),
        "init_from": base
        | {
            "fresh_parameters": fresh,
            "note": fresh_note(fresh),
        },
        "data": data_description(
            len(splits["train"]), len(templates), len(examples), args.word_names
        )
        | replay_description(len(frequent), args.replay_copies),
        "threads": args.threads,
        "command": "python -m models.copy_translation_train " + shlex.join(sys.argv[1:]),
    }
    if saved_meta is not None:  # the command that started the run, then each resume's
        meta["resume_commands"] = [*saved_meta.get("resume_commands", []), meta["command"]]
        meta["command"] = saved_meta["command"]

    def translate(sentences):
        result = copy_translations(model, source_sp, target_sp, sentences)
        model.train()
        return result

    session_start, last_save = time.time(), time.time()
    elapsed_before = state.elapsed_s

    def stop() -> bool:
        return (
            args.stop_after_min is not None
            and time.time() - session_start > 60 * args.stop_after_min
        )

    def on_step() -> None:
        nonlocal last_save
        state.elapsed_s = elapsed_before + time.time() - session_start
        if state.step % args.log_every == 0:
            rate = (state.step - (state.resumes[-1] if state.resumes else 0)) / (
                time.time() - session_start
            )
            print(
                f"step {state.step} loss {state.smoothed_loss:.4f} {rate:.2f} steps/s "
                f"lr {optimizer.param_groups[0]['lr']:.2e}",
                flush=True,
            )
        if state.step % args.validate_every == 0 or state.step == plan.steps:
            point = {
                "step": state.step,
                "wall_s": round(state.elapsed_s, 1),
                "train_loss": round(state.smoothed_loss, 5),
                **dev.validate(translate),
            }
            state.curve.append(point)
            print("validate " + json.dumps(point), flush=True)
            save_state(state_path, model, optimizer, state, meta)
            last_save = time.time()
        elif time.time() - last_save > 60 * args.save_every_min:
            save_state(state_path, model, optimizer, state, meta)
            last_save = time.time()

    if not state.curve:
        point = {"step": state.step, "wall_s": 0.0, "train_loss": None, **dev.validate(translate)}
        state.curve.append(point)
        print("validate " + json.dumps(point), flush=True)
    train_steps(model, optimizer, examples, state, plan, plan.steps, stop, on_step)
    save_state(state_path, model, optimizer, state, meta)
    print(f"saved {state_path} at step {state.step}", flush=True)


def fresh_note(fresh: list[str]) -> str:
    """What the model card says about the parameters the run started without."""
    if not fresh:
        return "every parameter from this copy model"
    if fresh == list(CopySeq2Seq.SPAN_PARAMETERS):
        return "every parameter from this copy model; the selective read W_r starts at zero"
    return "shared parameters from this generate-only model; the copy parameters start fresh"


def replay_description(frequent: int, copies: int) -> dict:
    """The data's `replay` field (the model card's "repeated" column reads it)."""
    if not frequent:
        return {}
    return {
        "replay": {
            "frequent_sources": frequent,
            "copies": copies,
            "how": "the most frequent training sources "
            "(models.tasks.translation.frequent_training_pairs) added this many more times, "
            "so the fine-tune keeps the labels a reader tries first",
        }
    }


def export_safetensors(state_path: Path, out_path: Path) -> dict:
    """Write the state's weights as safetensors; return the fields of a manifest entry (config,
    metrics, curve, init_from, data...) for whoever installs it (not into checkpoints/ here)."""
    saved = torch.load(state_path, weights_only=True)
    meta, state = saved["meta"], saved["state"]
    weights = {k: v.detach().contiguous() for k, v in saved["model"].items()}
    out_path.parent.mkdir(parents=True, exist_ok=True)
    save_file(weights, out_path, metadata={"family": "seq2seq-copy"})
    out_path.chmod(0o644)  # readable by the web server whichever user it runs as
    last = state["curve"][-1] if state["curve"] else {}
    return {
        "family": "seq2seq-copy",
        "task": "translation",
        "config": meta["config"],
        "parameters": sum(v.numel() for v in weights.values()),
        "seed": meta["plan"]["seed"],
        "init_from": {k: meta["init_from"].get(k) for k in ("checkpoint", "sha256")},
        "data": meta["data"],
        "steps": state["step"],
        "batch_size": meta["plan"]["batch_size"],
        "instances_seen": state["step"] * meta["plan"]["batch_size"],
        "optimizer": {
            "name": "Adam",
            "lr": meta["plan"]["lr"],
            "schedule": f"linear warm-up {meta['plan']['warmup']} steps, cosine decay to 5% "
            f"at step {meta['plan']['steps']}",
            "grad_clip_norm": meta["plan"]["clip"],
        },
        "loss": "Fenchel-Young loss of one alpha-entmax over [vocabulary; source positions] "
        "against the uniform distribution on the gold piece's entries"
        + (
            "; a piece that continues a copied run has that run's next position as its only "
            "gold position"
            if meta["config"].get("copy_spans")
            else ""
        ),
        "wall_time_s": round(state["elapsed_s"], 1),
        "threads_per_process": meta["threads"],
        "resumes": state["resumes"],
        "metrics": {k: v for k, v in last.items() if k not in ("step", "wall_s", "train_loss")},
        "validation_history": state["curve"],
        "command": meta["command"],
        "torch": torch.__version__,
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "file": out_path.name,
        "size_bytes": out_path.stat().st_size,
        "sha256": sha256_file(out_path),
    }


def export_command(args: argparse.Namespace) -> None:
    """Ship a run's weights as checkpoints/<name>.safetensors with its manifest entry."""
    entry = export_safetensors(
        RUN_DIR / args.run / "state.pt", CHECKPOINT_DIR / f"{args.name}.safetensors"
    )
    update_manifest(CHECKPOINT_DIR, args.name, entry)
    print(f"exported step {entry['steps']:,} of {args.run} as {entry['file']}", flush=True)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    train = commands.add_parser("train")
    train.add_argument("--alpha", type=float, required=True)
    train.add_argument("--run", required=True, help="folder under data/copy-translation/")
    train.add_argument(
        "--init-from",
        help="generate-only or copy weights: a path or a checkpoint name "
        "(default: the served generate-only model)",
    )
    train.add_argument("--steps", type=int, default=24_000, help="the schedule's length")
    train.add_argument("--stop-after-min", type=float, help="save and exit after this long")
    train.add_argument("--batch-size", type=int, default=64)
    train.add_argument("--lr", type=float, default=5e-4)
    train.add_argument("--warmup", type=int, default=200)
    train.add_argument("--seed", type=int, default=1234)
    train.add_argument("--template-pairs", type=int, default=20_000)
    train.add_argument("--replay-frequent", type=int, default=0, help="frequent sources kept")
    train.add_argument("--replay-copies", type=int, default=8, help="extra copies of each")
    train.add_argument("--dev-pairs", type=int, default=300)
    train.add_argument("--dev-templates", type=int, default=200)
    train.add_argument("--validate-every", type=int, default=1000)
    train.add_argument("--save-every-min", type=float, default=5.0)
    train.add_argument("--log-every", type=int, default=50)
    train.add_argument(
        "--split-numbers",
        action="store_true",
        help="cut source pieces where digits meet other characters (source_pieces)",
    )
    train.add_argument(
        "--copy-spans",
        action="store_true",
        help="the selective read and the span-following gold (models.copy_translation, 4.)",
    )
    train.add_argument(
        "--word-names",
        type=float,
        default=0.0,
        help="the share of training template names made of English words",
    )
    train.add_argument("--resume", action="store_true")
    train.add_argument("--threads", type=int, default=1)
    export = commands.add_parser("export")
    export.add_argument("--run", required=True)
    export.add_argument("--name", required=True, help="e.g. seq2seq-translate-copy-a1.5")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0].startswith("--") and argv[0] not in ("-h", "--help"):
        argv = ["train", *argv]  # train is the default command
    args = parse_args(argv)
    {"train": train_command, "export": export_command}[args.command](args)


if __name__ == "__main__":
    main()
