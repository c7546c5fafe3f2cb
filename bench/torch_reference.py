#!/usr/bin/python3
"""PyTorch reference for the ShadowSync DLRM-style CTR model (quality and speed yardstick).

Mirrors DESIGN.md section 4 and data/hashing.hpp:
  * Criteo TSV: label, I1..I13, C1..C26; empty = missing; missing trailing fields = empty.
    Dense: log(1 + max(x, 0)), missing -> 0. Categorical column c: row = hash_categorical(bytes, c)
    % rows_per_table (FNV-1a 64, xor (c+1)*golden, splitmix64 finalizer), bit for bit.
    Malformed lines (bad label, non-numeric/non-finite dense value, > 40 fields) are skipped and
    counted; blank lines are ignored.
  * Multi-hot columns (--multi-hot C1,C20,.. or 14..39, as data.multi-hot): a field is a bag of ids
    joined by --id-delimiter ('|'), each id hashed like a single-hot value of its column
    (data/line_parser.cpp); an empty field (or one the line lacks) is an empty bag, an empty id
    makes the line malformed, a bag keeps its first --max-ids ids (1024). The input is then Bags
    (flat fused row ids + one offset range per (example, column)) and each field is pooled by
    EmbeddingBag (--pooling sum|mean, as model.pooling; an empty bag: zeros), for dcn and dot.
  * One embedding table per column (stored as one fused [26*rows, dim] tensor with per-column row
    offsets: mathematically identical, one gather and one sparse update per step), init
    U(-sqrt(1/rows), +sqrt(1/rows)). Bottom MLP (ReLU after every layer), dot interaction (strict
    lower triangle, row-major), top MLP (last layer linear). Linear init as in public DLRM.
  * BCE with logits (batch mean). Dense: torch Adagrad (eps 1e-8, acc 0) or SGD. Sparse: row-wise
    Adagrad by hand (m_r += mean(g_r^2); w_r -= lr g_r / (sqrt(m_r) + eps)) or SGD, applied to the
    coalesced sparse gradient.
  * Training runs in file order (no shuffle); the last partial batch is trained too.

Usage:
  /usr/bin/python3 bench/torch_reference.py --train train-8k.tsv --eval heldout-2k.tsv \
      --arch small --batch-size 128 --output out.json
  /usr/bin/python3 bench/torch_reference.py --bench --arch dlrm-kaggle --batch-size 256
  /usr/bin/python3 bench/torch_reference.py --train mh.tsv --eval mh-eval.tsv --arch dcnv2-small \
      --multi-hot C1,C2,C5 [--pooling mean]
  /usr/bin/python3 bench/torch_reference.py --self-check   # multi-hot parsing on a tiny file
"""
import argparse
import json
import math
import os
import statistics
import sys
import tempfile
import time
from array import array


def _threads_asked(argv):
    """--threads as given on the command line (default 1), before torch loads: torch.set_num_threads
    does not bind the threads of an OpenBLAS or BLIS that PyTorch's generic BLAS calls, their
    environment variables do, and only when set before the library loads."""
    for i, a in enumerate(argv):
        if a == "--threads" and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith("--threads="):
            return a.split("=", 1)[1]
    return "1"


for _var in ("OPENBLAS_NUM_THREADS", "BLIS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, _threads_asked(sys.argv))

try:
    import numpy as np
    import torch
    import torch.nn as nn
except ImportError as e:  # --self-check (a ctest) is skipped where the bench packages are absent
    if "--self-check" in sys.argv:
        print(f"skipped: {e} (scripts/deps.sh bench installs it)")
        sys.exit(77)
    raise

NUM_DENSE, NUM_CAT = 13, 26
NUM_FIELDS = 1 + NUM_DENSE + NUM_CAT
MASK64 = (1 << 64) - 1
ARCHS = {  # arch -> (bottom MLP sizes, top MLP sizes); dim 16 -> 27*26/2 + 16 = 367 top inputs
    "small": ([13, 64, 32, 16], [367, 64, 32, 1]),
    "dlrm-kaggle": ([13, 512, 256, 64, 16], [367, 512, 256, 1]),
}
DENSE_LR = {"small": 0.03, "dlrm-kaggle": 0.005}  # the presets' train.dense-lr (model/arch.cpp)
# DCNv2 presets (model/arch.cpp): bottom MLP, top MLP (first entry: (T+1)*dim), dim, cross layers,
# cross rank, dense lr.
DCN_ARCHS = {
    "dlrm-dcnv2": ([13, 512, 256, 128], [3456, 1024, 1024, 512, 256, 1], 128, 3, 512, 0.005),
    "dcnv2-small": ([13, 64, 32, 16], [432, 64, 32, 1], 16, 3, 64, 0.01),
}


# ----------------------------------------------------------------------------- hashing
def hash_categorical(value: bytes, column: int) -> int:
    """Bit-exact port of data::hash_categorical (data/hashing.hpp)."""
    h = 14695981039346656037
    for c in value:
        h = ((h ^ c) * 1099511628211) & MASK64
    h ^= ((column + 1) * 0x9E3779B97F4A7C15) & MASK64
    h ^= h >> 30
    h = (h * 0xBF58476D1CE4E5B9) & MASK64
    h ^= h >> 27
    h = (h * 0x94D049BB133111EB) & MASK64
    h ^= h >> 31
    return h


# ----------------------------------------------------------------------------- data
class Bags:
    """Multi-hot categorical input of N examples: ids [nnz] i64 (fused rows: c * rows + r) and
    offsets [N * 26 + 1] i64, field (e, c) being ids[offsets[e*26 + c] : offsets[e*26 + c + 1]]
    (data::batch's cat and cat_offsets). Sliced by example like the single-hot [N, 26] tensor."""

    def __init__(self, ids, offsets):
        self.ids, self.offsets = ids, offsets

    def __len__(self):
        return (len(self.offsets) - 1) // NUM_CAT

    def __getitem__(self, s):
        start, stop, _ = s.indices(len(self))
        off = self.offsets[start * NUM_CAT:stop * NUM_CAT + 1]
        return Bags(self.ids[int(off[0]):int(off[-1])], off - off[0])


class _RowCache(dict):
    """Field bytes -> fused row of column c, computed on first sight."""

    def __init__(self, c, rows_per_table):
        super().__init__()
        self.c, self.rows, self.base = c, rows_per_table, c * rows_per_table

    def __missing__(self, v):
        r = self[v] = self.base + hash_categorical(v, self.c) % self.rows
        return r


def multi_hot_slots(spec):
    """--multi-hot's list (Criteo names C1..C26 or column indices 14..39, comma-separated) as the
    sorted categorical slots 0..25, like data.multi-hot with data.format=criteo."""
    slots = set()
    for item in filter(None, (x.strip() for x in (spec or "").split(","))):
        if item.isdigit() and 1 + NUM_DENSE <= int(item) < NUM_FIELDS:
            slots.add(int(item) - 1 - NUM_DENSE)
        elif item[:1] == "C" and item[1:].isdigit() and 1 <= int(item[1:]) <= NUM_CAT:
            slots.add(int(item[1:]) - 1)
        else:
            raise SystemExit(f"--multi-hot: '{item}' is no categorical column (C1..C26 or 14..39)")
    return sorted(slots)


def load_tsv(paths, rows_per_table, multi_hot=(), delimiter=b"|", max_ids=1024, limit=0):
    """Parse Criteo TSV files into tensors (dense [N,13] f32, idx [N,26] i64 fused, labels [N] f32).

    idx already contains the per-column offset c*rows_per_table into the fused table. With
    multi_hot (categorical slots whose fields are bags) idx is Bags instead; the fourth value is
    the count of malformed lines, a fifth (multi-hot only) that of bags cut to max_ids. A limit
    above 0 stops reading after that many examples.
    """
    if multi_hot:
        return _load_bags(paths, rows_per_table, set(multi_hot), delimiter, max_ids, limit)
    dense, idx, labels = array("f"), array("q"), array("f")
    caches = [dict() for _ in range(NUM_CAT)]  # per-column: field bytes -> fused row id
    malformed = []
    for path, lineno, fields, _ in _lines(paths, lambda: limit and len(labels) >= limit, malformed):
        try:
            y, row_dense = _parse_dense(fields)
        except ValueError as e:
            malformed.append((path, lineno, str(e)))
            continue
        dense.extend(row_dense)
        labels.append(y)
        for c, v in enumerate(fields[1 + NUM_DENSE:]):
            r = caches[c].get(v)
            if r is None:
                r = c * rows_per_table + hash_categorical(v, c) % rows_per_table
                caches[c][v] = r
            idx.append(r)
    n = len(labels)
    for path, lineno, why in malformed[:5]:
        print(f"warning: skipped malformed line {path}:{lineno} ({why})", file=sys.stderr)
    return (torch.from_numpy(np.frombuffer(dense, dtype=np.float32).reshape(n, NUM_DENSE).copy()),
            torch.from_numpy(np.frombuffer(idx, dtype=np.int64).reshape(n, NUM_CAT).copy()),
            torch.from_numpy(np.frombuffer(labels, dtype=np.float32).copy()),
            len(malformed))


def _lines(paths, full, malformed):
    """(path, line number, fields padded to NUM_FIELDS, fields the line had) of every non-empty
    line of paths in order, until full() is true; a line of too many fields goes to malformed."""
    for path in paths:
        if full():
            return
        with open(path, "rb") as f:
            for lineno, line in enumerate(f, 1):
                if full():
                    return
                line = line.rstrip(b"\r\n")
                if not line:
                    continue
                fields = line.split(b"\t")
                if len(fields) > NUM_FIELDS:
                    malformed.append((path, lineno, "too many fields"))
                    continue
                present = len(fields)
                fields += [b""] * (NUM_FIELDS - present)
                yield path, lineno, fields, present


def _parse_dense(fields):
    """(label, 13 dense values) of a padded line's fields; ValueError(why) when malformed."""
    try:
        y = float(fields[0])
        if y not in (0.0, 1.0):
            raise ValueError
    except ValueError:
        raise ValueError("bad label")
    row_dense = []
    for v in fields[1:1 + NUM_DENSE]:
        if not v:
            row_dense.append(0.0)
            continue
        try:
            if b"_" in v:  # Python's float() accepts "1_0"; C++ does not
                raise ValueError
            x = float(v)
            if not math.isfinite(x):
                raise ValueError
        except ValueError:
            raise ValueError("bad dense value")
        row_dense.append(math.log1p(max(x, 0.0)))
    return y, row_dense


def _load_bags(paths, rows_per_table, multi_hot, delimiter, max_ids, limit):
    """load_tsv for multi-hot input: the same rows, the categorical columns as Bags."""
    dense, ids, offsets, labels = array("f"), array("q"), array("q", [0]), array("f")
    caches = [_RowCache(c, rows_per_table) for c in range(NUM_CAT)]
    bag = [c in multi_hot for c in range(NUM_CAT)]
    malformed, cut = [], 0
    for path, lineno, fields, present in _lines(paths, lambda: limit and len(labels) >= limit,
                                                malformed):
        # a multi-hot field the line lacks (at or past `present`) is an empty bag
        try:
            y, row_dense = _parse_dense(fields)
            rows, ends, cuts = [], [], 0
            for c in range(NUM_CAT):
                v, cache = fields[1 + NUM_DENSE + c], caches[c]
                if not bag[c]:
                    rows.append(cache[v])
                elif v and 1 + NUM_DENSE + c < present:
                    parts = v.split(delimiter)
                    if b"" in parts:
                        raise ValueError(f"C{c + 1}: empty id in '{v.decode(errors='replace')}'")
                    if len(parts) > max_ids:
                        parts, cuts = parts[:max_ids], cuts + 1
                    rows.extend(map(cache.__getitem__, parts))
                ends.append(len(rows))
        except ValueError as e:
            malformed.append((path, lineno, str(e)))
            continue
        base = len(ids)
        dense.extend(row_dense)
        labels.append(y)
        ids.extend(rows)
        offsets.extend(base + x for x in ends)
        cut += cuts
    n = len(labels)
    for path, lineno, why in malformed[:5]:
        print(f"warning: skipped malformed line {path}:{lineno} ({why})", file=sys.stderr)
    if cut:
        print(f"warning: {cut} bags cut to their first {max_ids} ids", file=sys.stderr)
    bags = Bags(torch.from_numpy(np.frombuffer(ids, dtype=np.int64).copy()),
                torch.from_numpy(np.frombuffer(offsets, dtype=np.int64).copy()))
    return (torch.from_numpy(np.frombuffer(dense, dtype=np.float32).reshape(n, NUM_DENSE).copy()),
            bags, torch.from_numpy(np.frombuffer(labels, dtype=np.float32).copy()),
            len(malformed), cut)


# ----------------------------------------------------------------------------- model
def make_linear(fan_in, fan_out):
    lin = nn.Linear(fan_in, fan_out)
    with torch.no_grad():  # public DLRM init
        lin.weight.normal_(0.0, math.sqrt(2.0 / (fan_in + fan_out)))
        lin.bias.normal_(0.0, math.sqrt(1.0 / fan_out))
    return lin


def make_mlp(sizes, relu_last):
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(make_linear(sizes[i], sizes[i + 1]))
        if relu_last or i < len(sizes) - 2:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


class DLRM(nn.Module):
    """Bottom MLP, dot interaction, top MLP. Single-hot input gathers with nn.Embedding; Bags
    pool each field with F.embedding_bag over the same weight (mode = pooling)."""

    def __init__(self, arch, rows_per_table, dim, pooling="sum"):
        super().__init__()
        self.pooling = pooling
        bottom, top = ARCHS[arch]
        bottom = bottom[:-1] + [dim]
        top = [dim + (NUM_CAT + 1) * NUM_CAT // 2] + top[1:]
        self.bottom = make_mlp(bottom, relu_last=True)
        self.top = make_mlp(top, relu_last=False)
        # 26 tables of rows_per_table rows each, fused; column c owns rows [c*rows, (c+1)*rows).
        self.emb = nn.Embedding(NUM_CAT * rows_per_table, dim, sparse=True)
        bound = math.sqrt(1.0 / rows_per_table)
        with torch.no_grad():
            self.emb.weight.uniform_(-bound, bound)
        li, lj = torch.tril_indices(NUM_CAT + 1, NUM_CAT + 1, offset=-1)  # row-major (1,0),(2,0),(2,1)..
        self.register_buffer("li", li, persistent=False)
        self.register_buffer("lj", lj, persistent=False)

    def forward(self, dense, idx):
        x = self.bottom(dense)                                 # [B, dim]
        if isinstance(idx, Bags):                              # [B, 26, dim], pooled bags
            e = nn.functional.embedding_bag(idx.ids, self.emb.weight, idx.offsets, mode=self.pooling,
                                            sparse=True, include_last_offset=True)
            e = e.view(x.shape[0], NUM_CAT, -1)
        else:
            e = self.emb(idx)
        t = torch.cat([x.unsqueeze(1), e], dim=1)              # [B, 27, dim]
        z = torch.bmm(t, t.transpose(1, 2))                    # [B, 27, 27]
        feats = torch.cat([x, z[:, self.li, self.lj]], dim=1)  # [B, dim + 351]
        return self.top(feats).squeeze(1)                      # logits [B]


class DCNv2(nn.Module):
    """DCNv2 as model/cross.hpp: x0 = [bottom(dense), e_1..e_T] ([B, D], D = (T+1) dim), then per
    cross layer x_{l+1} = x0 * (U_l V_l x_l + b_l) + x_l, the top MLP reads x_L.

    V_l [r, D] (Linear without bias) and U_l [D, r] (Linear whose bias is b_l), both normal with
    std sqrt(2 / (D + r)), b_l zero (model/dense_layout.cpp, TorchRec's LowRankCrossNet). The
    embeddings are one nn.EmbeddingBag (mode = pooling; single-hot input: one single-id bag per
    field; Bags: their offsets), fused as DLRM's nn.Embedding, so `emb.weight` gets the same
    sparse gradient and optimiser.
    """

    def __init__(self, arch, rows_per_table, dim, pooling="sum"):
        super().__init__()
        bottom, top, _, layers, rank, _ = DCN_ARCHS[arch]
        width = (NUM_CAT + 1) * dim
        self.bottom = make_mlp(bottom[:-1] + [dim], relu_last=True)
        self.top = make_mlp([width] + top[1:], relu_last=False)
        self.emb = nn.EmbeddingBag(NUM_CAT * rows_per_table, dim, mode=pooling, sparse=True,
                                   include_last_offset=True)
        bound = math.sqrt(1.0 / rows_per_table)
        std = math.sqrt(2.0 / (width + rank))
        self.v = nn.ModuleList(nn.Linear(width, rank, bias=False) for _ in range(layers))
        self.u = nn.ModuleList(nn.Linear(rank, width) for _ in range(layers))
        with torch.no_grad():
            self.emb.weight.uniform_(-bound, bound)
            for v, u in zip(self.v, self.u):
                v.weight.normal_(0.0, std)
                u.weight.normal_(0.0, std)
                u.bias.zero_()

    def forward(self, dense, idx):
        b = dense.shape[0]
        if isinstance(idx, Bags):
            flat, offsets = idx.ids, idx.offsets
        else:
            flat = idx.reshape(-1)                              # one single-id bag per field
            offsets = torch.arange(0, flat.numel() + 1, dtype=torch.int64)
        e = self.emb(flat, offsets).view(b, NUM_CAT * self.emb.embedding_dim)
        x0 = torch.cat([self.bottom(dense), e], dim=1)          # [B, D]
        x = x0
        for v, u in zip(self.v, self.u):
            x = x0 * u(v(x)) + x
        return self.top(x).squeeze(1)                           # logits [B]


def make_model(arch, rows_per_table, dim, pooling="sum"):
    return (DCNv2 if arch in DCN_ARCHS else DLRM)(arch, rows_per_table, dim, pooling)


class SparseOptimizer:
    """Row-wise Adagrad or SGD on the coalesced sparse gradient of the embedding table."""

    def __init__(self, weight, kind, lr, eps=1e-8):
        self.weight, self.kind, self.lr, self.eps = weight, kind, lr, eps
        self.acc = torch.zeros(weight.shape[0]) if kind == "rowwise-adagrad" else None

    @torch.no_grad()
    def step(self):
        g = self.weight.grad.coalesce()
        rows, vals = g.indices()[0], g.values()       # unique rows, summed gradients [U, dim]
        if self.kind == "rowwise-adagrad":
            m = self.acc[rows] + vals.pow(2).mean(dim=1)
            self.acc[rows] = m
            vals = vals / (m.sqrt() + self.eps).unsqueeze(1)
        self.weight.index_add_(0, rows, vals, alpha=-self.lr)
        self.weight.grad = None


def make_optimizers(model, args):
    dense_params = [p for n, p in model.named_parameters() if not n.startswith("emb.")]
    if args.dense_optimizer == "adagrad":
        dense = torch.optim.Adagrad(dense_params, lr=args.dense_lr,
                                    initial_accumulator_value=0.0, eps=1e-8)
    else:
        dense = torch.optim.SGD(dense_params, lr=args.dense_lr)
    return dense, SparseOptimizer(model.emb.weight, args.sparse_optimizer, args.sparse_lr)


def train_step(model, loss_fn, dense_opt, sparse_opt, dense, idx, y):
    logits = model(dense, idx)
    loss = loss_fn(logits, y)
    dense_opt.zero_grad(set_to_none=True)
    loss.backward()
    dense_opt.step()
    sparse_opt.step()
    return loss


def dense_linears(model):
    """The Linear layers in the engine's flat dense_layout order: bottom, then (DCNv2) each cross
    layer's V [r, D] and U [D, r] with b as U's bias, then top."""
    cross = [m for v, u in zip(model.v, model.u) for m in (v, u)] if isinstance(model, DCNv2) else []
    return [m for m in list(model.bottom) + cross + list(model.top) if isinstance(m, nn.Linear)]


def load_init(model, directory):
    """Loads the C++ engine's initial parameters (bench/trace_engine.cpp --dump-init=DIR).

    DIR/dense.f32: the flat dense_layout buffer (per layer W [out, in] column-major, then b;
    bottom layers, (DCNv2) the cross layers' V, U, b, then top). DIR/emb.f32: [26 * rows, dim] row-major, row = table * rows + r.
    """
    flat = np.fromfile(f"{directory}/dense.f32", dtype=np.float32)
    off = 0
    with torch.no_grad():
        for lin in dense_linears(model):
            out_f, in_f = lin.weight.shape
            w = flat[off:off + in_f * out_f].reshape(in_f, out_f).T  # column-major [out, in]
            lin.weight.copy_(torch.from_numpy(np.ascontiguousarray(w)))
            off += in_f * out_f
            if lin.bias is not None:  # a cross layer's V has none
                lin.bias.copy_(torch.from_numpy(flat[off:off + out_f].copy()))
                off += out_f
        if off != flat.size:
            raise SystemExit(f"{directory}/dense.f32: {flat.size} floats, the model has {off}")
        emb = np.fromfile(f"{directory}/emb.f32", dtype=np.float32)
        if emb.size != model.emb.weight.numel():
            raise SystemExit(f"{directory}/emb.f32: {emb.size} floats, expected "
                             f"{model.emb.weight.numel()}")
        model.emb.weight.copy_(torch.from_numpy(emb.reshape(model.emb.weight.shape)))


def save_params(model, sparse_opt, directory):
    """The inverse of load_init (plus the row-wise Adagrad state as DIR/rowacc.f32)."""
    parts = []
    for lin in dense_linears(model):
        parts.append(lin.weight.detach().numpy().T.reshape(-1))  # column-major [out, in]
        if lin.bias is not None:
            parts.append(lin.bias.detach().numpy().reshape(-1))
    np.concatenate(parts).astype(np.float32).tofile(f"{directory}/dense.f32")
    model.emb.weight.detach().numpy().astype(np.float32).tofile(f"{directory}/emb.f32")
    if sparse_opt.acc is not None:
        sparse_opt.acc.numpy().astype(np.float32).tofile(f"{directory}/rowacc.f32")


def dense_norm(model):
    return math.sqrt(sum(float(p.detach().double().pow(2).sum())
                         for n, p in model.named_parameters() if not n.startswith("emb.")))


# ----------------------------------------------------------------------------- metrics
def entropy(p):
    if p <= 0.0 or p >= 1.0:
        return float("nan")
    return -(p * math.log(p) + (1 - p) * math.log(1 - p))


def exact_auc(scores, labels):
    """Rank-based (Mann-Whitney) AUC with average ranks for ties."""
    scores, labels = np.asarray(scores, np.float64), np.asarray(labels) > 0.5
    n_pos = int(labels.sum())
    n_neg = len(labels) - n_pos
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    _, inverse, counts = np.unique(scores, return_inverse=True, return_counts=True)
    first_rank = np.cumsum(counts) - counts + 1              # 1-based rank of each tie group
    avg_rank = first_rank + (counts - 1) / 2.0
    rank_sum = avg_rank[inverse][labels].sum()
    return float((rank_sum - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg))


@torch.no_grad()
def evaluate(model, dense, idx, y, batch=4096):
    model.eval()
    logits = torch.cat([model(dense[i:i + batch], idx[i:i + batch])
                        for i in range(0, len(y), batch)])
    model.train()
    logloss = nn.functional.binary_cross_entropy_with_logits(
        logits.double(), y.double()).item()
    base = y.double().mean().item()
    return {"eval_logloss": logloss, "eval_ne": logloss / entropy(base),
            "eval_auc": exact_auc(logits.double().numpy(), y.numpy()),
            "eval_calibration": torch.sigmoid(logits.double()).mean().item() / base}


# ----------------------------------------------------------------------------- modes
def run_train(args):
    t0 = time.perf_counter()
    mh = (multi_hot_slots(args.multi_hot),
          b"\t" if args.id_delimiter == "tab" else args.id_delimiter.encode(), args.max_ids)
    dense, idx, y, bad_train, *cut = load_tsv(args.train, args.rows_per_table, *mh, args.max_examples)
    if args.max_examples:
        dense, idx, y = dense[:args.max_examples], idx[:args.max_examples], y[:args.max_examples]
    ev = load_tsv([args.eval], args.rows_per_table, *mh) if args.eval else None
    parse_s = time.perf_counter() - t0
    n = len(y)
    print(f"parsed {n} train / {len(ev[2]) if ev else 0} eval examples in {parse_s:.1f}s")
    model = make_model(args.arch, args.rows_per_table, args.dim, args.pooling)
    if args.init_from:
        load_init(model, args.init_from)
    if args.trace or args.every:
        print(f"init |dense| {dense_norm(model):.9g} "
              f"|emb| {model.emb.weight.detach().double().norm().item():.9g}")
    dense_opt, sparse_opt = make_optimizers(model, args)
    loss_fn = nn.BCEWithLogitsLoss()
    bs = args.batch_size
    train_ne, seconds = float("nan"), 0.0
    step = 0
    for epoch in range(args.epochs):
        loss_sum = 0.0  # progressive: losses of predictions made before each batch's update
        window, window_n = 0.0, 0
        t0 = time.perf_counter()
        for i in range(0, n, bs):
            loss = train_step(model, loss_fn, dense_opt, sparse_opt,
                              dense[i:i + bs], idx[i:i + bs], y[i:i + bs])
            loss_sum += loss.item() * len(y[i:i + bs])
            if step < args.trace:
                print(f"batch {step} loss {loss.item():.9g}")
            step += 1
            if args.every:
                window += loss.item() * len(y[i:i + bs])
                window_n += len(y[i:i + bs])
                if step % args.every == 0:
                    ne_so_far = loss_sum / (i + len(y[i:i + bs])) / entropy(
                        y[:i + bs].double().mean().item())
                    print(f"step {step} examples {i + len(y[i:i + bs])} avg_loss "
                          f"{window / window_n:.6f} ne {ne_so_far:.6f} |dense| "
                          f"{dense_norm(model):.6f} "
                          f"|emb| {model.emb.weight.detach().double().norm().item():.6f}")
                    window, window_n = 0.0, 0
        seconds += time.perf_counter() - t0
        train_ne = loss_sum / n / entropy(y.double().mean().item())
        print(f"epoch {epoch + 1}: progressive train NE {train_ne:.4f}")
    if args.trace or args.every:
        print(f"final |dense| {dense_norm(model):.9g} "
              f"|emb| {model.emb.weight.detach().double().norm().item():.9g}")
    if args.dump_final:
        save_params(model, sparse_opt, args.dump_final)
    res = {"arch": args.arch, "batch_size": bs, "train_examples": n * args.epochs,
           "eval_examples": len(ev[2]) if ev else 0, "train_ne": train_ne,
           "eval_ne": None, "eval_auc": None, "eval_logloss": None, "eval_calibration": None,
           "examples_per_second": n * args.epochs / seconds if seconds > 0 else None,
           "seconds": seconds, "malformed_lines": bad_train + (ev[3] if ev else 0),
           "parse_seconds": parse_s, "threads": args.threads, "seed": args.seed, "blas": blas_in_use()}
    if isinstance(idx, Bags):
        res.update({"multi_hot": args.multi_hot, "pooling": args.pooling, "cut_bags": cut[0],
                    "train_ids_per_example": len(idx.ids) / max(n, 1)})
    if ev:
        res.update(evaluate(model, *ev[:3]))
    return res


def blas_in_use():
    """The file behind the libblas.so.3 this process loaded (PyTorch's Debian build has
    BLAS_INFO=generic: its GEMMs call libblas.so.3, whichever library the alternatives or
    LD_LIBRARY_PATH give; an OpenBLAS that provides only LAPACK is mapped too but not asked)."""
    libs = set()
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.split()[-1]
                if os.path.basename(path).startswith("libblas.so"):
                    libs.add(path)
    except OSError:
        pass
    return ", ".join(sorted(libs)) or "unknown"


def sgemm_gflops(n=1024, repeats=5, iterations=10):
    """SGEMM n x n x n through torch.mm in this process, on --threads threads (set before torch
    loaded, above): the median GFLOP/s."""
    a, b = torch.randn(n, n), torch.randn(n, n)
    for _ in range(2):
        torch.mm(a, b)
    rates = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(iterations):
            torch.mm(a, b)
        rates.append(2.0 * n ** 3 * iterations / (time.perf_counter() - t0) / 1e9)
    return statistics.median(rates)


def run_bench(args):
    """Synthetic inputs: time forward+backward+optimiser steps; median over repeats."""
    rng = np.random.default_rng(args.seed)
    model = make_model(args.arch, args.rows_per_table, args.dim)
    dense_opt, sparse_opt = make_optimizers(model, args)
    loss_fn = nn.BCEWithLogitsLoss()
    bs, pool = args.batch_size, 16  # cycle over a few pre-generated batches
    offsets = np.arange(NUM_CAT) * args.rows_per_table
    batches = [(torch.from_numpy(np.log1p(rng.integers(0, 1000, (bs, NUM_DENSE))).astype(np.float32)),
                torch.from_numpy(rng.integers(0, args.rows_per_table, (bs, NUM_CAT)) + offsets),
                torch.from_numpy((rng.random(bs) < 0.25).astype(np.float32)))
               for _ in range(pool)]
    for i in range(args.warmup):
        train_step(model, loss_fn, dense_opt, sparse_opt, *batches[i % pool])
    rates = []
    for r in range(args.repeats):
        t0 = time.perf_counter()
        for i in range(args.iterations):
            train_step(model, loss_fn, dense_opt, sparse_opt, *batches[i % pool])
        rates.append(bs * args.iterations / (time.perf_counter() - t0))
        print(f"repeat {r + 1}: {rates[-1]:.0f} examples/s")
    return {"arch": args.arch, "batch_size": bs, "examples_per_second_median": statistics.median(rates),
            "examples_per_second_min": min(rates), "examples_per_second_max": max(rates),
            "threads": args.threads, "iterations": args.iterations, "repeats": args.repeats,
            "blas": blas_in_use(), "sgemm_gflops": sgemm_gflops()}


def self_check():
    """Multi-hot parsing and pooling on a tiny file (tests/CMakeLists.txt runs it when torch is
    installed): bags, offsets and rows as the engine's reader makes them, pooled sums and means."""
    rows, dim = 1000, 4
    cats = lambda c1, c2, c3: [c1, c2, c3] + [b"x"] * (NUM_CAT - 3)
    lines = [[b"1"] + [b"1"] * NUM_DENSE + cats(b"a|b|a", b"", b"q"),
             [b"0"] + [b""] * NUM_DENSE + cats(b"a", b"c|d|e", b""),
             [b"0"] + [b"2"] * NUM_DENSE + cats(b"a||b", b"c", b"q"),   # empty id: malformed
             [b"1", b"3"]]                                                # short: empty bags
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "mh.tsv")
        with open(path, "wb") as f:
            f.write(b"\n".join(b"\t".join(l) for l in lines) + b"\n")
        dense, bags, y, bad, cut = load_tsv([path], rows, multi_hot_slots("C1,15"), b"|", 2)
        single = load_tsv([path], rows)[1]
        one = load_tsv([path], rows, [2])[1][0:1]  # line 1's C3 is a bag of one id
        limited = [len(load_tsv([path], rows, m, limit=2)[2]) for m in ((), [0])]
    r = lambda v, c: c * rows + hash_categorical(v, c) % rows
    rest = lambda: [r(b"x", c) for c in range(3, NUM_CAT)]
    want = ([r(b"a", 0), r(b"b", 0)] + [] + [r(b"q", 2)] + rest()       # a|b|a cut to 2 ids
            + [r(b"a", 0), r(b"c", 1), r(b"d", 1)] + [r(b"", 2)] + rest()  # c|d|e cut to 2
            + [] + [] + [r(b"", c) for c in range(2, NUM_CAT)])           # short line
    sizes = [2, 0, 1] + [1] * 23 + [1, 2, 1] + [1] * 23 + [0, 0, 1] + [1] * 23
    checks = [(bad, 1), (cut, 2), (y.tolist(), [1.0, 0.0, 1.0]), (len(bags), 3),
              (bags.ids.tolist(), want), (bags.offsets.tolist(), [0] + np.cumsum(sizes).tolist()),
              (bags[1:3].offsets.tolist(), [0] + np.cumsum(sizes[26:]).tolist()),
              (bags[1:3].ids.tolist(), want[26:]),
              (single[1, 0].item(), r(b"a", 0)), (dense[1].tolist(), [0.0] * NUM_DENSE),
              (limited, [2, 2])]
    for mode in ("sum", "mean"):
        model = DCNv2("dcnv2-small", rows, dim, mode)
        w = model.emb.weight.detach()
        e = model.emb(bags.ids, bags.offsets).detach()
        pool = (lambda v: v.sum(0)) if mode == "sum" else (lambda v: v.mean(0))
        checks += [(torch.allclose(e[0], pool(w[[r(b"a", 0), r(b"b", 0)]])), True),
                   (e[1].abs().sum().item(), 0.0),                        # empty bag: zeros
                   (torch.allclose(e[27], pool(w[[r(b"c", 1), r(b"d", 1)]])), True)]
        dlrm = DLRM("small", rows, dim, mode)  # a bag of one id is the single-hot field
        checks += [(torch.equal(m(dense[:1], one), m(dense[:1], single[:1])), True)
                   for m in (model, dlrm)]
        pooled = nn.functional.embedding_bag(bags.ids, w, bags.offsets, mode=mode,
                                             include_last_offset=True)
        checks.append((torch.equal(pooled, e), True))
    failed = [(i, got, exp) for i, (got, exp) in enumerate(checks) if got != exp]
    for i, got, exp in failed:
        print(f"self-check {i}: got {got}, expected {exp}", file=sys.stderr)
    print(f"{len(checks) - len(failed)} passed, {len(failed)} failed")
    sys.exit(1 if failed else 0)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--train", nargs="+", help="training TSV file(s), read in order")
    p.add_argument("--eval", help="held-out TSV file")
    p.add_argument("--arch", choices=sorted(ARCHS) + sorted(DCN_ARCHS), default="small")
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--dense-lr", type=float, help="default: the preset's, as in train.dense-lr (small 0.03, dlrm-kaggle 0.005, "
                   "dlrm-dcnv2 0.005, dcnv2-small 0.01)")
    p.add_argument("--sparse-lr", type=float, default=0.03)
    p.add_argument("--dense-optimizer", choices=["adagrad", "sgd"], default="adagrad")
    p.add_argument("--sparse-optimizer", choices=["rowwise-adagrad", "sgd"], default="rowwise-adagrad")
    p.add_argument("--rows-per-table", type=int, default=100000)
    p.add_argument("--dim", type=int, help="default: the preset's (16; dlrm-dcnv2 128)")
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--bench", action="store_true", help="synthetic speed benchmark, no files")
    p.add_argument("--warmup", type=int, default=10, help="bench: untimed iterations")
    p.add_argument("--iterations", type=int, default=100, help="bench: timed iterations per repeat")
    p.add_argument("--repeats", type=int, default=5, help="bench: number of timed repeats")
    p.add_argument("--output", help="write the result as JSON to this path")
    p.add_argument("--init-from", metavar="DIR",
                   help="start from the C++ engine's initial parameters (DIR/dense.f32, "
                        "DIR/emb.f32 as written by bench_trace --dump-init=DIR)")
    p.add_argument("--trace", type=int, default=0, metavar="N",
                   help="print the loss of each of the first N batches")
    p.add_argument("--every", type=int, default=0, metavar="K",
                   help="print window loss, NE and parameter norms every K batches")
    p.add_argument("--max-examples", type=int, default=0,
                   help="train on the first N examples only (0: all)")
    p.add_argument("--multi-hot", metavar="COLS", default="",
                   help="data.multi-hot: columns whose field is a bag of ids (C1..C26 or 14..39, "
                        "comma-separated)")
    p.add_argument("--id-delimiter", default="|", help="data.id-delimiter (default |)")
    p.add_argument("--max-ids", type=int, default=1024, help="data.max-ids: ids a bag keeps")
    p.add_argument("--pooling", choices=["sum", "mean"], default="sum", help="model.pooling")
    p.add_argument("--self-check", action="store_true",
                   help="check the multi-hot parsing and pooling on a tiny file, then exit")
    p.add_argument("--dump-final", metavar="DIR",
                   help="write the trained parameters as DIR/dense.f32, DIR/emb.f32, DIR/rowacc.f32")
    args = p.parse_args()
    if args.self_check:
        return self_check()
    if args.dense_lr is None:
        args.dense_lr = DCN_ARCHS[args.arch][5] if args.arch in DCN_ARCHS else DENSE_LR[args.arch]
    if args.dim is None:
        args.dim = DCN_ARCHS[args.arch][2] if args.arch in DCN_ARCHS else 16
    if not args.bench and not args.train:
        p.error("--train is required unless --bench is given")
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    res = run_bench(args) if args.bench else run_train(args)
    if args.bench and res["sgemm_gflops"] < 20.0:
        print(f"warning: PyTorch's GEMMs run in {res['blas']} at {res['sgemm_gflops']:.1f} GFLOP/s "
              f"({args.threads} thread(s)): Debian's reference BLAS runs at about 3-6, an optimised one "
              "near the core's peak (unless the machine is busy); a speed figure against a reference "
              "BLAS flatters the engine (apt-get install libopenblas0-pthread, or scripts/deps.sh bench)",
              file=sys.stderr)
    for k, v in res.items():
        print(f"  {k}: {v:.4f}" if isinstance(v, float) else f"  {k}: {v}")
    if args.output:
        with open(args.output, "w") as f:
            json.dump(res, f, indent=2)
            f.write("\n")


if __name__ == "__main__":
    main()
