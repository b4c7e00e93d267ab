"""The abstract interpreter of the code scan: walks a module's statements in order and tracks
an abstract value per variable (see :mod:`auditor.codescan` for what it reports)."""
from __future__ import annotations

import ast
import re
from dataclasses import replace
from typing import Any, Callable, Iterable, Sequence

from auditor.codescan.values import CONST, UNKNOWN, Event, Frame, Obj, RawFinding, Selection, Val
from auditor.codescan.vocabulary import (AGG_NAMES, APPLY_METHODS, BUILTINS,
                                         COMBINING_METHODS, COMPARE_FUNCS, CONST_FUNCS, COSMETIC,
                                         CV_FUNCS, EVAL_METHODS, FAMILY, FIT_FUNCS, FIT_METHODS,
                                         FULL, LOADER_RE, META_ATTRS, MIX, PASS_ATTRS, PIPELINES,
                                         ROW_METHODS, SEARCHES, SPLIT_ROLES, SPLITTERS,
                                         STAT_METHODS, STATELESS, TEST, TRAIN, VAL, METRIC_RE,
                                         MODEL_RE, combine_roles, role_hint)


# -- the scanner ------------------------------------------------------------------------------
class Scanner:
    """Abstract interpretation of one module; ``findings`` holds what it found."""

    def __init__(self, extra_fitters: Sequence[str] = (),
                 loc: Callable[[int], str] = lambda line: f"line {line}") -> None:
        self.loc = loc
        self.scopes: list[dict[str, Val]] = [{}]
        self.events: list[Event] = []
        self.findings: list[RawFinding] = []
        self.frames: list[Frame] = []
        self.selections: list[Selection] = []
        self.eval_info: list[tuple[int, frozenset[int], str]] = []
        self.returns: list[list[Val]] = []
        self.functions: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
        self.analysed: set[int] = set()
        self.method_class: dict[int, int] = {}  # method -> its class (ids of the nodes)
        self.files: dict[str, Val] = {}  # a path this code wrote data to -> that data
        self.paths: dict[int, list[str]] = {}  # event -> names its output was bound to
        self.test_fits: dict[int, tuple[frozenset[int], str]] = {}  # fit_on_test event ->
        # the test set it was fitted on (holdouts) and why
        self.class_attrs: dict[int, dict[str, Val]] = {}  # class -> self.* bindings
        self.active: list[int] = []
        self.unknown_roots: dict[str, int] = {}
        self.counter = 0
        self.line = 0
        self.in_test = False      # evaluating the condition of an if/while/conditional
        self.target_name: str | None = None  # the variable an assignment binds
        self.assigning = False    # evaluating the value of an assignment
        self.extra_classes = {n for n in extra_fitters if n[:1].isupper()}
        self.extra_funcs = {n for n in extra_fitters if not n[:1].isupper()}

    # -- bookkeeping ---------------------------------------------------------------------------
    def fresh(self) -> int:
        self.counter += 1
        return self.counter

    def lookup(self, name: str) -> Val | None:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return None

    def bind(self, name: str, v: Val) -> None:
        self.scopes[-1][name] = v

    def report(self, metric: str, family: str, cls: str, line: int, subject: str,
               why: str, *, split_line: int | None = None, path: tuple[str, ...] = ()
               ) -> None:
        if any(f.metric == metric and f.line == line for f in self.findings):
            return
        self.findings.append(RawFinding(metric, family, cls, line, subject, why, split_line,
                                        path))

    def confirm(self, taints: frozenset[int], how: str) -> None:
        """Tainted data reached a split: report the fits on unsplit data it carries."""
        for e in sorted(taints):
            ev = self.events[e]
            if ev.reported or ev.metric in ("evaluated_on_training_rows", "fit_on_test") \
                    or ev.needs_concat:
                continue  # reported when the rows are evaluated (or put back together)
            ev.reported = True
            if ev.metric == "fit_before_inner_split":
                why = (f"{ev.cls} is fitted on {ev.subject} and its output is split again "
                       f"({how} at {self.loc(self.line)}): the inner validation folds shaped "
                       "it, so the inner scores are a little optimistic (the test score is "
                       "not affected)")
            elif ev.metric == "resampled_before_split":
                why = (f"{ev.cls} resamples {ev.subject or 'the data'} before the data is split "
                       f"({how} at {self.loc(self.line)}), so the evaluation rows hold copies "
                       "or interpolations of training rows and the resampled class balance: "
                       "resample the training part only, after the split")
            elif ev.metric == "fit_before_split":
                why = (f"{ev.cls} is fitted on {ev.subject or 'the data'} before the data is "
                       f"split ({how} at {self.loc(self.line)}), so its fitted statistics "
                       "include the evaluation rows")
            else:
                why = (f"a statistic of all rows of {ev.subject or 'the data'} fills or scales "
                       f"the data before it is split ({how} at {self.loc(self.line)}), so the "
                       "evaluation rows shaped the training features")
            self.report(ev.metric, ev.family, ev.cls, ev.line, ev.subject, why,
                        split_line=self.line, path=tuple(self.paths.get(e, ())))

    def new_event(self, metric: str, family: str, cls: str, line: int, subject: str,
                  roots: frozenset[int]) -> int:
        self.events.append(Event(metric, family, cls, line, subject, roots))
        return len(self.events) - 1

    # -- entry ---------------------------------------------------------------------------------
    def scan(self, tree: ast.Module) -> list[RawFinding]:
        self.block(tree.body)
        for fn in self.functions:  # functions never called: parameters are unknown data
            if id(fn) not in self.analysed:
                args = {a.arg: self.param_value(a.arg) for a in _all_args(fn)}
                self.run_function(fn, args)
        return self.findings

    def param_value(self, name: str) -> Val:
        if name in ("self", "cls"):
            return UNKNOWN
        hint = role_hint(name)
        r = self.fresh()
        return Val("data", role=hint or FULL, roots=frozenset({r}), subject=name,
                   holdouts=frozenset({r}) if hint == TEST else frozenset(),
                   from_split=hint is not None)  # the caller's split part

    # -- statements ----------------------------------------------------------------------------
    def block(self, body: list[ast.stmt]) -> None:
        for st in body:
            self.stmt(st)

    def stmt(self, st: ast.stmt) -> None:
        self.line = getattr(st, "lineno", self.line)
        if isinstance(st, ast.Expr):
            self.ev(st.value)
        elif isinstance(st, ast.Assign):
            one = st.targets[0] if len(st.targets) == 1 else None
            self.target_name = one.id if isinstance(one, ast.Name) else None
            v = self.ev_assigned(st.value)
            self.target_name = None
            for t in st.targets:
                self.assign(t, v, st.value)
        elif isinstance(st, ast.AnnAssign) and st.value is not None:
            self.assign(st.target, self.ev_assigned(st.value), st.value)
        elif isinstance(st, ast.AugAssign):
            cur = self.ev(st.target)
            self.assigning = True
            try:
                new = self.combine([cur, self.ev(st.value)], role_of=cur)
            finally:
                self.assigning = False
            self.assign(st.target, new, None)
        elif isinstance(st, (ast.For, ast.AsyncFor)):
            it = self.ev(st.iter)
            frame = self.push_frame(st)
            self.assign(st.target, self.elem_of(it), None)
            self.block(st.body)
            self.pop_frame(frame)
            self.block(st.orelse)
        elif isinstance(st, ast.While):
            self.ev_test(st.test)
            frame = self.push_frame(st)
            self.block(st.body)
            self.pop_frame(frame)
            self.block(st.orelse)
        elif isinstance(st, ast.If):
            self.ev_test(st.test)
            if not st.orelse:
                self.block(st.body)
                return
            scope = self.scopes[-1]
            before = dict(scope)
            self.block(st.body)
            taken = dict(scope)
            scope.clear()
            scope.update(before)
            self.block(st.orelse)
            for name in taken.keys() | scope.keys():
                scope[name] = _joined(taken.get(name), scope.get(name))
        elif isinstance(st, (ast.With, ast.AsyncWith)):
            for item in st.items:
                v = self.ev(item.context_expr)
                if item.optional_vars is not None:
                    self.assign(item.optional_vars, v, None)
            self.block(st.body)
        elif isinstance(st, ast.Try) or type(st).__name__ == "TryStar":
            self.block(st.body)
            for h in st.handlers:
                self.block(h.body)
            self.block(st.orelse)
            self.block(st.finalbody)
        elif isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.bind(st.name, Val("func", node=st, name=st.name))
            self.functions.append(st)
        elif isinstance(st, ast.ClassDef):
            self.bind(st.name, Val("module", name=st.name))
            methods = [sub for sub in st.body
                       if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef))]
            # __init__ first: what it binds to self.* (a vectorizer, a model) is what the
            # other methods of the class find there
            for sub in sorted(methods, key=lambda m: m.name != "__init__"):
                self.functions.append(sub)
                self.method_class[id(sub)] = id(st)
        elif isinstance(st, ast.Return):
            v = self.ev(st.value) if st.value is not None else CONST
            if self.returns:
                self.returns[-1].append(v)
        elif isinstance(st, ast.Import):
            for a in st.names:
                self.bind(a.asname or a.name.split(".")[0],
                          Val("module", name=a.name if a.asname else a.name.split(".")[0]))
        elif isinstance(st, ast.ImportFrom):
            for a in st.names:
                self.bind(a.asname or a.name, Val("module", name=a.name))
        elif isinstance(st, ast.Match):
            self.ev(st.subject)
            for case in st.cases:
                self.block(case.body)
        elif isinstance(st, (ast.Assert, ast.Raise, ast.Delete)):
            for child in ast.iter_child_nodes(st):
                if isinstance(child, ast.expr):
                    self.ev(child)

    def ev_assigned(self, node: ast.expr) -> Val:
        self.assigning = True
        try:
            return self.ev(node)
        finally:
            self.assigning = False

    def ev_test(self, node: ast.expr) -> Val:
        saved, self.in_test = self.in_test, True
        try:
            return self.ev(node)
        finally:
            self.in_test = saved

    def push_frame(self, node: ast.AST) -> Frame:
        f = Frame(getattr(node, "lineno", self.line), getattr(node, "end_lineno", self.line))
        self.frames.append(f)
        return f

    def pop_frame(self, frame: Frame) -> None:
        self.frames.pop()
        if not (frame.fits and frame.evals):
            return
        first = self.eval_info[frame.evals[0]]
        holdouts = frozenset().union(*(self.eval_info[e][1] for e in frame.evals))
        sel = Selection(first[0], first[2], holdouts, frozenset(frame.evals),
                        how=f"models fitted in the loop at {self.loc(frame.start)} are scored "
                            f"on the test set ({first[2]})")
        if frame.compared:
            self.report_selection(sel, "the test scores are compared inside the loop to pick "
                                       "the best, and the best test score is the one reported")
        else:
            self.selections.append(sel)

    def report_selection(self, sel: Selection, then: str) -> None:
        if sel.reported:
            return
        sel.reported = True
        self.report("test_reused_for_selection", "model", "", sel.line, sel.subject,
                    f"{sel.how}; {then}, so the final test score is optimistic (use a "
                    "validation split or cross-validation on train for the selection)")

    # -- assignment ----------------------------------------------------------------------------
    def assign(self, target: ast.expr, v: Val, value_node: ast.expr | None) -> None:
        if isinstance(target, ast.Name):
            self.bind(target.id, self.named(target.id, v, value_node))
        elif isinstance(target, (ast.Tuple, ast.List)):
            elts = target.elts
            nodes = (value_node.elts if isinstance(value_node, (ast.Tuple, ast.List))
                     and len(value_node.elts) == len(elts) else [None] * len(elts))
            if v.kind == "possplit":
                k = len(elts)
                parts = [self.split_part(v.items[0], TRAIN if i == 0 else TEST if i == k - 1
                                         else VAL, v.line) for i in range(k)]
                for t, p in zip(elts, parts):
                    self.assign(t, p, None)
                return
            items = list(v.items) if v.kind in ("tuple", "dict") else []
            if items and len(items) == len(elts) and not any(
                    isinstance(e, ast.Starred) for e in elts):
                for t, item, n in zip(elts, items, nodes):
                    self.assign(t, item, n)
            else:
                elem = self.elem_of(v) if v.kind in ("tuple", "dict", "iter") else v
                for t in elts:
                    self.assign(t.value if isinstance(t, ast.Starred) else t, elem, None)
        elif isinstance(target, ast.Starred):
            self.assign(target.value, v, value_node)
        elif (name := self.frame_of(target)) is not None:
            # a column written as an attribute of a frame (X.Age = X.Age.fillna(...))
            frame = self.lookup(name)
            assert frame is not None
            new = self.combine([frame, v], role_of=frame)
            self.passed(new, name)
            self.bind(name, replace(new, subject=frame.subject, split_part=frame.split_part,
                                    index=frame.index))
        elif isinstance(target, ast.Subscript) or (
                isinstance(target, ast.Attribute) and _dotted(target) is None):
            base = _base_name(target)
            if base is None:
                return
            cur = self.lookup(base) or UNKNOWN
            if cur.kind in ("data", "stat"):
                new = self.combine([cur, v], role_of=cur)
                self.passed(new, base)
                self.bind(base, replace(new, subject=cur.subject, split_part=cur.split_part,
                                        index=cur.index))
            elif cur.kind in ("const", "tuple", "dict", "score", "unknown"):
                new = self.combine([cur, v])
                self.bind(base, new if new.kind != "const" else cur)
        elif isinstance(target, ast.Attribute):
            self.bind(_dotted(target) or "", v)

    def named(self, name: str, v: Val, value_node: ast.expr | None) -> Val:
        """The value bound to ``name``: the name's role hint applies to unsplit data (and a row
        selection of unsplit data into a train/val/test name is a split)."""
        hint = role_hint(name)
        if v.kind == "data":
            self.passed(v, name)
        if v.kind == "data" and v.role == MIX and value_node is not None:
            part = _flag_role(value_node) or (
                hint if hint in (TRAIN, TEST) and self.is_row_selection(value_node) else None)
            if part is not None:  # combined[:n_train], df[df.is_train == 1]: that part again
                return replace(v, role=part, subject=name, from_split=False,
                               holdouts=v.holdouts if part == TEST else frozenset())
        if v.kind == "data" and hint:
            if v.split_part and v.role in (TRAIN, TEST, VAL) and hint != v.role:
                holdouts = (v.holdouts or frozenset({self.fresh()})) if hint == TEST \
                    else frozenset()
                return replace(v, role=hint, holdouts=holdouts, split_part=False, subject=name)
            if v.role == FULL:
                split = v.split_part or (value_node is not None
                                         and self.is_row_selection(value_node))
                if split:
                    self.confirm(v.taints, f"rows of it are selected into {name}")
                r = self.fresh()
                return replace(v, role=hint, subject=name, from_split=split,
                               holdouts=frozenset({r}) if hint == TEST else frozenset())
        if v.kind == "data":
            return replace(v, subject=name, subset=_masked(value_node))
        return v

    def frame_of(self, node: ast.expr) -> str | None:
        """The name of the data frame ``node`` is a column attribute of (``X.Age``), else None."""
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            frame = self.lookup(node.value.id)
            if frame is not None and frame.kind == "data":
                return node.value.id
        return None

    def passed(self, v: Val, name: str) -> None:
        """Record that the data of ``v`` is bound to ``name``: each pending fit's path to where
        it leaks (at most 8 names)."""
        for e in v.taints:
            path = self.paths.setdefault(e, [])
            if (not path or path[-1] != name) and len(path) < 8:
                path.append(name)

    def is_row_selection(self, node: ast.expr) -> bool:
        while True:
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr in COSMETIC:
                node = node.func.value
            elif isinstance(node, ast.Attribute) and node.attr in ("values", "T"):
                node = node.value
            else:
                break
        if isinstance(node, ast.Subscript):
            sl = node.slice
            if isinstance(sl, ast.Slice):
                return True
            if isinstance(sl, ast.Tuple) and sl.elts and isinstance(sl.elts[0], ast.Slice):
                first = sl.elts[0]
                return any(x is not None for x in (first.lower, first.upper, first.step))
            if isinstance(sl, ast.Tuple) and sl.elts:
                sl = sl.elts[0]
            v = self.ev(sl)
            return v.kind not in ("const", "tuple", "unknown", "module")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in ROW_METHODS:
            if node.func.attr == "drop":
                kws = {k.arg: k.value for k in node.keywords}
                if "columns" in kws or _const(kws.get("axis")) in (1, "columns"):
                    return False
                return bool(node.args) or "index" in kws
            return True
        return False

    # -- values --------------------------------------------------------------------------------
    def combine(self, vals: Iterable[Val], role_of: Val | None = None) -> Val:
        flat = list(_flatten(vals))
        datas = [v for v in flat if v.kind == "data"]
        stats = [v for v in flat if v.kind == "stat"]
        evals = frozenset().union(*(v.evals for v in flat))
        taints = frozenset().union(*(v.taints for v in flat))
        if datas:
            role = role_of.role if role_of is not None and role_of.kind == "data" \
                else combine_roles(d.role for d in datas)
            roots = frozenset().union(*(d.roots for d in datas))
            if stats:
                taints |= self.apply_stats(stats, role, roots, datas)
            first = role_of if role_of is not None and role_of.kind == "data" else datas[0]
            return Val("data", role=role, roots=roots, taints=taints,
                       holdouts=frozenset().union(*(d.holdouts for d in datas)), evals=evals,
                       subject=first.subject, index=first.index,
                       from_split=any(d.from_split for d in datas if d.role == role))
        if stats:
            return Val("stat", role=combine_roles(s.role for s in stats),
                       roots=frozenset().union(*(s.roots for s in stats)), taints=taints,
                       holdouts=frozenset().union(*(s.holdouts for s in stats)),
                       evals=evals, subject=stats[0].subject, line=stats[0].line)
        if evals:
            return Val("score", evals=evals)
        objs = [v for v in flat if v.kind == "object"]
        if objs:
            return objs[0]
        return CONST

    def apply_stats(self, stats: list[Val], role: str, roots: frozenset[int],
                    datas: list[Val]) -> frozenset[int]:
        """A statistic meets data: a pending event (unsplit data), or a finding when the data
        is already split or the statistic mixes train and test rows."""
        new = set()
        split = any(d.from_split for d in datas)
        for s in stats:
            subject = s.subject or datas[0].subject
            if s.role == MIX and self.assigning:
                self.report("fit_on_train_and_test", "statistic", "", s.line, subject,
                            f"a statistic of {subject} over rows of both train and test is "
                            f"applied to data at {self.loc(self.line)}")
            elif s.role == FULL and role in SPLIT_ROLES and split and s.roots & roots \
                    and self.assigning:
                self.report("global_statistic_before_split", "statistic", "", s.line, subject,
                            f"a statistic of all rows of {subject}, test rows included, is "
                            f"applied to the {role} part at {self.loc(self.line)}")
            elif (s.role, role) in ((FULL, FULL), (TRAIN, TRAIN)) and not split:
                # unsplit rows, or rows a name calls train that no split has made: reported
                # if the data is split afterwards (the notebook's own split)
                new.add(self.new_event("global_statistic_before_split", "statistic", "",
                                       s.line, subject, s.roots))
        return frozenset(new)

    def as_data(self, v: Val) -> Val:
        if v.kind in ("data", "stat"):
            return v
        if v.kind in ("tuple", "dict", "iter"):
            c = self.combine(v.items)
            if c.kind == "data":
                return c
        r = self.fresh()
        return Val("data", roots=frozenset({r}))

    def elem_of(self, v: Val) -> Val:
        if v.kind == "iter":
            return v.items[0] if v.items else UNKNOWN
        if v.kind in ("tuple", "dict"):
            items = v.items
            if items and all(i.kind == "tuple" and len(i.items) == len(items[0].items)
                             for i in items):
                return Val("tuple", items=tuple(self.combine(col) if not all(
                    x.kind == "object" for x in col) else col[0]
                    for col in zip(*(i.items for i in items))))
            objs = [i for i in items if i.kind == "object"]
            if objs and len(objs) == len(items):
                return objs[0]
            return self.combine(items)
        if v.kind in ("data", "object", "score"):
            return replace(v, index=False) if v.kind == "data" else v
        return CONST if v.kind == "const" else UNKNOWN

    def split_part(self, v: Val, role: str, holdout: int) -> Val:
        d = self.as_data(v)
        return replace(d, role=role, split_part=True, index=True, from_split=True,
                       holdouts=frozenset({holdout}) if role == TEST else frozenset())

    # -- expressions ---------------------------------------------------------------------------
    def ev(self, node: ast.expr | None) -> Val:
        if node is None:
            return CONST
        if isinstance(node, ast.Constant):
            return CONST
        if isinstance(node, ast.Name):
            return self.ev_name(node.id)
        if isinstance(node, ast.Attribute):
            return self.ev_attribute(node)
        if isinstance(node, ast.Subscript):
            return self.ev_subscript(node)
        if isinstance(node, ast.Call):
            return self.ev_call(node)
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return Val("tuple", items=tuple(self.ev(e) for e in node.elts))
        if isinstance(node, ast.Dict):
            return Val("dict", items=tuple(self.ev(v) for v in node.values),
                       keys=tuple(_const(k) for k in node.keys))
        if isinstance(node, ast.Compare):
            vals = [self.ev(node.left)] + [self.ev(c) for c in node.comparators]
            if self.in_test:  # a comparison that decides something (not an assert)
                self.compared(vals)
            return self.combine(vals)
        if isinstance(node, ast.BinOp):
            return self.combine([self.ev(node.left), self.ev(node.right)])
        if isinstance(node, ast.UnaryOp):
            return self.ev(node.operand)
        if isinstance(node, ast.BoolOp):
            return self.combine([self.ev(v) for v in node.values])
        if isinstance(node, ast.IfExp):
            self.ev_test(node.test)
            return self.combine([self.ev(node.body), self.ev(node.orelse)])
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            return self.ev_comprehension(node)
        if isinstance(node, ast.NamedExpr):
            v = self.ev(node.value)
            self.assign(node.target, v, node.value)
            return v
        if isinstance(node, ast.Starred):
            return self.ev(node.value)
        if isinstance(node, ast.Await):
            return self.ev(node.value)
        if isinstance(node, ast.JoinedStr):
            for v in node.values:
                if isinstance(v, ast.FormattedValue):
                    self.ev(v.value)
            return CONST
        if isinstance(node, ast.Slice):
            return self.combine([self.ev(x) for x in (node.lower, node.upper, node.step)])
        return UNKNOWN

    def ev_name(self, name: str) -> Val:
        v = self.lookup(name)
        if v is not None:
            return v
        if name in BUILTINS:
            return Val("module", name=name)
        if name not in self.unknown_roots:
            self.unknown_roots[name] = self.fresh()
        r = self.unknown_roots[name]
        hint = role_hint(name)
        return Val("data", role=hint or FULL, roots=frozenset({r}), subject=name,
                   holdouts=frozenset({r}) if hint == TEST else frozenset(),
                   from_split=hint is not None)  # the caller's split part

    def ev_attribute(self, node: ast.Attribute) -> Val:
        dotted = _dotted(node)
        if dotted is not None:
            v = self.lookup(dotted)
            if v is not None:
                return v
        base = self.ev(node.value)
        if base.kind == "module":
            return Val("module", name=f"{base.name}.{node.attr}")
        if base.kind in ("data", "stat"):
            if node.attr in META_ATTRS:
                return CONST
            if node.attr in PASS_ATTRS or node.attr.startswith("_"):
                return base
            return replace(base, subject=node.attr)  # a column: df.age
        if base.kind == "object":
            return base if node.attr in ("named_steps", "best_estimator_", "steps") \
                else UNKNOWN
        return base if base.kind in ("score", "tuple", "dict") else UNKNOWN

    def ev_subscript(self, node: ast.Subscript) -> Val:
        base = self.ev(node.value)
        idx = self.ev(node.slice)
        key = _const(node.slice)
        if base.kind in ("tuple", "dict"):
            if base.kind == "dict" and key in base.keys:
                return base.items[base.keys.index(key)]
            if base.kind == "tuple" and isinstance(key, int) and -len(base.items) <= key \
                    < len(base.items):
                return base.items[key]
            return self.elem_of(base)
        if base.kind == "object":
            return base
        if base.kind in ("data", "stat"):
            role, holdouts = base.role, base.holdouts
            taints = base.taints  # a row mask's own taints describe the selection, not values
            if idx.kind == "data" and idx.index and idx.role in SPLIT_ROLES \
                    and base.role == FULL:
                if base.taints:
                    self.confirm(base.taints, "rows of it are selected with split indices")
                role, holdouts = idx.role, idx.holdouts
                from_split = True
            else:
                from_split = base.from_split
            subject = key if isinstance(key, str) else base.subject
            return replace(base, role=role, holdouts=holdouts, taints=taints, subject=subject,
                           index=base.index, split_part=False, from_split=from_split)
        return base if base.kind == "score" else UNKNOWN

    def ev_comprehension(self, node: ast.expr) -> Val:
        frame = self.push_frame(node)
        for gen in node.generators:  # type: ignore[attr-defined]
            self.assign(gen.target, self.elem_of(self.ev(gen.iter)), None)
            for cond in gen.ifs:
                self.ev_test(cond)
        if isinstance(node, ast.DictComp):
            self.ev(node.key)
            elt = self.ev(node.value)
        else:
            elt = self.ev(node.elt)  # type: ignore[attr-defined]
        self.pop_frame(frame)
        return Val("tuple", items=(elt,))

    def compared(self, vals: Iterable[Val]) -> None:
        evals = frozenset().union(*(v.evals for v in _flatten(vals)))
        if not evals:
            return
        for f in self.frames:
            if evals & set(f.evals):
                f.compared = True
        for sel in self.selections:
            if not sel.reported and evals & sel.evals:
                self.report_selection(sel, f"the test scores are compared at "
                                           f"{self.loc(self.line)} to pick the best")

    # -- calls ---------------------------------------------------------------------------------
    def ev_call(self, node: ast.Call) -> Val:
        func = node.func
        args = [self.ev(a) for a in node.args]
        kwargs = {k.arg: self.ev(k.value) for k in node.keywords if k.arg}
        if isinstance(func, ast.Attribute):
            recv = self.ev_attribute_base(func)
            meth = func.attr
            if recv.kind == "object":
                return self.object_method(recv.obj, meth, args, kwargs, node)  # type: ignore
            if recv.kind in ("data", "stat"):
                return self.data_method(recv, meth, args, kwargs, node, func.value)
            if recv.kind == "module":
                return self.named_call(meth, f"{recv.name}.{meth}", args, kwargs, node)
            if recv.kind == "func":
                return UNKNOWN
            return self.container_method(recv, meth, args, kwargs, func.value)
        if isinstance(func, ast.Name):
            v = self.lookup(func.id)
            if v is not None and v.kind == "func":
                return self.call_user(v, args, kwargs)
            if v is not None and v.kind == "object":
                return self.object_method(v.obj, "predict", args, kwargs, node)  # type: ignore
            name = v.name if v is not None and v.kind == "module" else func.id
            return self.named_call(name.split(".")[-1], name, args, kwargs, node)
        self.ev(func)
        return self.combine(args + list(kwargs.values()))

    def ev_attribute_base(self, func: ast.Attribute) -> Val:
        dotted = _dotted(func.value) if isinstance(func.value, (ast.Name, ast.Attribute)) \
            else None
        if dotted is not None:
            v = self.lookup(dotted)
            if v is not None:
                return v
        return self.ev(func.value)

    def named_call(self, short: str, qual: str, args: list[Val], kwargs: dict[str, Val],
                   node: ast.Call) -> Val:
        every = args + list(kwargs.values())
        if short in self.extra_classes:
            return Val("object", obj=Obj(short, "transformer", "custom"))
        if short in self.extra_funcs:
            return self.fit_function(short, "custom", args, kwargs, node)
        if short in STATELESS:
            return Val("object", obj=Obj(short, "transformer", "stateless", stateless=True))
        if short in PIPELINES:
            return self.make_pipeline(short, every)
        if short in SEARCHES:
            return Val("object", obj=Obj(short, "model", "model", search=True))
        if short in SPLITTERS:
            return Val("object", obj=Obj(short, "splitter", "splitter"))
        if short in FAMILY:
            return Val("object", obj=Obj(short, "transformer", FAMILY[short]))
        if MODEL_RE.search(short) and short[:1].isupper():
            es = any(k in kwargs for k in ("early_stopping_rounds", "callbacks"))
            return Val("object", obj=Obj(short, "model", "model", early_stop=es))
        if short == "train_test_split":
            return self.train_test_split(args, node)
        if args and (short in ("array_split", "random_split") or (short == "split" and qual.split(
                ".")[0] in ("numpy", "np", "torch", "jax", "cupy"))):
            self.confirm(self.as_data(args[0]).taints, f"it is split by {short}")
            return Val("possplit", items=(self.as_data(args[0]),), line=self.fresh())
        if short in CV_FUNCS:
            data = self.combine(args[1:3] + [kwargs[k] for k in ("X", "y") if k in kwargs])
            self.confirm(data.taints, f"it is cross-validated by {short}")
            return CONST
        if short in FIT_FUNCS:
            return self.fit_function(short, FIT_FUNCS[short], args, kwargs, node)
        if short == "resample" and {"n_samples", "replace", "stratify"} & kwargs.keys():
            # sklearn.utils.resample (librosa's and scipy's take sample rates or a length)
            return self.fit_function(short, "resampler", args, kwargs, node)
        if short == "cut" and "." in qual and isinstance(_const(
                node.args[1] if len(node.args) > 1 else _kw(node, "bins")), int):
            # a bin count: edges spread between the minimum and maximum of the rows given
            return self.fit_function(short, "discretizer", args, kwargs, node)
        if short in ("concat", "vstack", "hstack", "append"):
            self.put_together(every)
        if short == "get_dummies":
            data = self.combine(args[:1] + [kwargs[k] for k in ("data",) if k in kwargs])
            if data.kind == "data" and data.role == MIX:
                self.report("fit_on_train_and_test", "encoder", "get_dummies", node.lineno,
                            data.subject, f"pd.get_dummies learns its categories from "
                            f"{data.subject or 'data'}, which combines train and test rows")
            return self.combine(every)
        if METRIC_RE.search(short) and short not in ("make_scorer", "get_scorer"):
            return self.evaluation(self.combine(every), node)
        if short in COMPARE_FUNCS:
            self.compared(every)
            if "." in qual and not any(v.evals for v in _flatten(every)) and args \
                    and short in STAT_METHODS:
                return self.stat_of(self.combine(args[:1]), node)
            return self.combine(args)
        if "." in qual and short in STAT_METHODS and args:
            return self.stat_of(self.combine(args[:1]), node)
        if short in ("zip",):
            return Val("iter", items=(Val("tuple", items=tuple(self.elem_of(a) for a in args)),))
        if short == "enumerate" and args:
            return Val("iter", items=(Val("tuple", items=(CONST, self.elem_of(args[0]))),))
        if short in ("next", "iter") and args:
            return self.elem_of(args[0]) if short == "next" else args[0]
        if short in CONST_FUNCS:
            return CONST
        if short != "split" and _SPLIT_FUNC.search(short) \
                and not _NOT_ROW_SPLIT.search(short) and any(v.kind == "data"
                                                            for v in _flatten(args)):
            # a splitting helper defined elsewhere (``from utils import split_data``): its
            # outputs are split parts, their roles from the names they are bound to
            data = self.as_data(self.combine(args))
            self.confirm(data.taints, f"it is split by {short}")
            return replace(data, taints=frozenset(), split_part=True, role=FULL)
        if LOADER_RE.match(short) and not any(v.kind == "data" for v in _flatten(every)):
            path = _const(node.args[0]) if node.args else None
            if isinstance(path, str) and path in self.files:  # written earlier by this code
                return self.files[path]
            r = self.fresh()
            return Val("data", roots=frozenset({r}), line=node.lineno)
        return self.combine(every)

    def make_pipeline(self, short: str, every: list[Val]) -> Val:
        objs = [v.obj for v in _flatten(every) if v.kind == "object" and v.obj]
        if objs and objs[-1].kind == "model":
            return Val("object", obj=Obj(short, "model", "model",
                                         early_stop=objs[-1].early_stop))
        stateful = [o for o in objs if o.kind == "transformer" and not o.stateless]
        if not stateful:
            return Val("object", obj=Obj(short, "transformer", "stateless", stateless=True))
        return Val("object", obj=Obj(short, "transformer", stateful[0].family))

    def train_test_split(self, args: list[Val], node: ast.Call) -> Val:
        arrays = [self.as_data(a) for a in args if a.kind != "const"] or [self.as_data(UNKNOWN)]
        for a in arrays:
            self.confirm(a.taints, "it is split by train_test_split")
        holdout = self.fresh()
        items: list[Val] = []
        for a in arrays:
            items += [self.split_part(a, TRAIN, holdout), self.split_part(a, TEST, holdout)]
        return Val("tuple", items=tuple(items))

    def fit_function(self, short: str, family: str, args: list[Val], kwargs: dict[str, Val],
                     node: ast.Call) -> Val:
        data = self.as_data(self.combine(args[:1] + [kwargs[k] for k in ("X",) if k in kwargs]))
        data = replace(data, subject=_subject(node, data, self.target_name))
        obj = Obj(short, "transformer", family)
        self.fit_transformer(obj, data, node)
        return replace(data, taints=data.taints | frozenset(obj.events), split_part=False)

    def stat_of(self, data: Val, node: ast.Call) -> Val:
        if data.kind not in ("data", "stat"):
            return data
        return Val("stat", role=data.role, roots=data.roots, taints=data.taints,
                   holdouts=data.holdouts, subject=data.subject, line=node.lineno)

    def data_method(self, recv: Val, meth: str, args: list[Val], kwargs: dict[str, Val],
                    node: ast.Call, recv_node: ast.expr) -> Val:
        every = args + list(kwargs.values())
        if meth in _WRITERS and node.args and isinstance(_const(node.args[0]), str):
            self.files[_const(node.args[0])] = recv  # read back later: the same rows
            return CONST
        if meth in _FUNCTION_APPLY and node.args:
            # a function of the whole column or group, unless it runs on each row or value:
            # axis=1, or Series.apply (a single column selected: df["a"], df.a)
            one_column = isinstance(recv_node, ast.Attribute) or (
                isinstance(recv_node, ast.Subscript) and isinstance(_const(recv_node.slice), str))
            each = _const_kw(node, "axis") in (1, "columns") or (meth == "apply" and one_column)
            applied = self.applied(recv, node.args[0], each)
            if applied is not None:
                return applied
        if any(v.evals for v in _flatten([recv])) and meth in COMPARE_FUNCS:
            self.compared([recv])
        row_wise = _const_kw(node, "axis") in (1, "columns")  # across a row's columns
        if meth == "rank" and recv.kind == "data" and not row_wise \
                and "groupby" not in ast.unparse(recv_node):
            # percentile positions among the rows given: learned from all of them (ranks
            # within a row, or within each entity's own rows, are not)
            return self.learned(recv, "rank", "scaler", node)
        if (meth in STAT_METHODS and not row_wise) or (meth == "transform" and any(
                _const(a) in AGG_NAMES for a in node.args)):
            return self.stat_of(recv, node)
        if meth == "sample" and recv.kind == "data" and recv.role == FULL \
                and (recv.subset or _masked(recv_node)) and _const_kw(node, "frac") != 1:
            # a class's rows drawn down (or up, with replacement): resampling once they are put
            # back with the other rows (a subsample alone is not)
            out = self.learned(recv, "DataFrame.sample", "resampler", node)
            for e in out.taints - recv.taints:
                self.events[e].needs_concat = True
            return out
        if meth == "train_test_split":
            self.confirm(recv.taints, "it is split by train_test_split")
            holdout = self.fresh()
            return Val("dict", items=(self.split_part(recv, TRAIN, holdout),
                                      self.split_part(recv, TEST, holdout)),
                       keys=("train", "test"))
        if meth in ("items",):
            return Val("iter", items=(Val("tuple", items=(CONST, self.elem_of(recv))),))
        if meth in ("keys",):
            return CONST
        if meth in ("values",) and recv.kind != "data":
            return Val("iter", items=(self.elem_of(recv),))
        if meth in COMBINING_METHODS:
            self.put_together([recv, *every])
        role_of = None if meth in COMBINING_METHODS else recv
        inplace = _const_kw(node, "inplace") is True
        saved, self.assigning = self.assigning, self.assigning or inplace  # a write
        try:
            out = self.combine([recv, *every], role_of=role_of)
        finally:
            self.assigning = saved
        if out.kind == "data" and meth not in COMBINING_METHODS:
            out = replace(out, subject=recv.subject, index=recv.index)
        if inplace:
            # a column as an attribute (X.Age.fillna(..., inplace=True)) writes the frame
            base = self.frame_of(recv_node) or _base_name(recv_node)
            if base:
                cur = self.lookup(base) or recv
                new = self.combine([cur, out], role_of=cur) if cur.kind == "data" else out
                self.passed(new, base)
                self.bind(base, new)
        return out

    def put_together(self, vals: list[Val]) -> None:
        """Rows combined: a drawn subset (``DataFrame.sample``) put back with other rows of
        the same data is a resampling of it."""
        datas = [v for v in _flatten(vals) if v.kind == "data"]
        for d in datas:
            for e in d.taints:
                if self.events[e].needs_concat and any(
                        o is not d and o.roots & d.roots for o in datas):
                    self.events[e].needs_concat = False

    def learned(self, recv: Val, cls: str, family: str, node: ast.Call) -> Val:
        """``recv`` transformed by something learned from its rows (``cls`` of ``family``):
        the output carries the fit."""
        out = replace(self.combine([recv]), subject=recv.subject)
        obj = Obj(cls, "transformer", family)
        self.fit_transformer(obj, out, node)
        return replace(out, taints=out.taints | frozenset(obj.events))

    def applied(self, recv: Val, fn: ast.expr, each: bool = False) -> Val | None:
        """``recv.apply(fn)`` (``transform``, ``agg``, ``pipe``...) of a lambda or a user
        function: ``fn`` followed with its argument bound to the receiver's rows, its result
        what the call returns (a column filled with its own mode inside the lambda is a
        statistic of every row applied to them); ``each``: it runs on one row or value at a
        time (bound to a constant: a statistic of it is no column statistic); None for
        anything else."""
        arg = CONST if each else replace(recv, index=False)
        if isinstance(fn, ast.Lambda):
            names = [a.arg for a in fn.args.posonlyargs + fn.args.args]
            self.scopes.append({names[0]: arg} if names else {})
            try:
                body = self.ev(fn.body)
            finally:
                self.scopes.pop()
        elif isinstance(fn, ast.Name) and (f := self.lookup(fn.id)) is not None \
                and f.kind == "func":
            body = self.call_user(f, [arg], {})
        else:
            return None
        out = self.combine([recv, body], role_of=recv)
        return replace(out, subject=recv.subject) if out.kind == "data" else out

    def container_method(self, recv: Val, meth: str, args: list[Val], kwargs: dict[str, Val],
                         recv_node: ast.expr) -> Val:
        every = args + list(kwargs.values())
        if recv.evals and meth in COMPARE_FUNCS:
            self.compared([recv])
        if meth in ("append", "extend", "update", "insert", "add", "setdefault"):
            base = _base_name(recv_node)
            if base:
                new = self.combine([recv, *every])
                if new.kind == "const" and recv.kind in ("tuple", "dict"):
                    new = Val("tuple", items=recv.items + tuple(every))
                self.bind(base, new)
            return CONST
        if meth == "items":
            return Val("iter", items=(Val("tuple", items=(CONST, self.elem_of(recv))),))
        if meth == "values":
            return Val("iter", items=(self.elem_of(recv),))
        if meth in ("keys", "count", "index"):
            return CONST
        return self.combine([recv, *every])

    # -- estimator methods ---------------------------------------------------------------------
    def object_method(self, obj: Obj, meth: str, args: list[Val], kwargs: dict[str, Val],
                      node: ast.Call) -> Val:
        if obj.kind == "splitter":
            if meth == "split":
                data = self.combine(args[:2] + [kwargs[k] for k in ("X", "y") if k in kwargs])
                self.confirm(data.taints, f"it is split by {obj.cls}.split")
                d = self.as_data(data)
                fold = self.fresh()
                tr = replace(d, role=TRAIN, index=True, taints=frozenset(), holdouts=frozenset(),
                             from_split=True)
                va = replace(d, role=VAL, index=True, taints=frozenset(), from_split=True,
                             holdouts=frozenset({fold}))
                return Val("iter", items=(Val("tuple", items=(tr, va)),))
            return CONST
        data_args = [a for a in args if a.kind != "object"]
        data_args += [kwargs[k] for k in ("X", "y", "x", "raw_documents", "texts", "data")
                      if k in kwargs]
        if meth in FIT_METHODS:
            data = self.as_data(self.combine(data_args[:2]))
            data = replace(data, subject=_subject(node, data, self.target_name))
            if obj.kind == "transformer":
                self.fit_transformer(obj, data, node)
            else:
                self.fit_model(obj, data, kwargs, node,
                               labelled=len(data_args) >= 2 or "y" in kwargs)
            if meth in ("fit", "partial_fit", "fit_on_texts", "fit_on_sequences", "adapt"):
                return Val("object", obj=obj)
            inner = frozenset({obj.inner[1]}) if obj.inner is not None else frozenset()
            out = replace(data, taints=data.taints | frozenset(obj.events) | inner,
                          split_part=False)
            if meth in ("fit_resample", "fit_sample"):
                y = self.as_data(data_args[1]) if len(data_args) > 1 else out
                return Val("tuple", items=(out, replace(y, taints=y.taints | frozenset(
                    obj.events))))
            return out
        if meth in APPLY_METHODS:
            data = self.combine(data_args[:1])
            if data.kind != "data":
                return UNKNOWN
            if obj.kind == "transformer":
                if data.role in SPLIT_ROLES and data.from_split:
                    for e in sorted(obj.events):
                        ev = self.events[e]
                        if not ev.reported and ev.roots & data.roots:
                            self.confirm(frozenset({e}), f"the fitted {obj.cls} is applied to "
                                                         f"the {data.role} part")
                inner = frozenset({obj.inner[1]}) if obj.inner is not None \
                    and data.role == TRAIN and obj.inner[0] & data.roots else frozenset()
                return replace(data, taints=data.taints | frozenset(obj.events) | inner,
                               split_part=False)
            self.check_mix_fit(obj, data)
            out = replace(data, split_part=False, index=False,
                          taints=data.taints | frozenset(obj.events))
            e = self.overlap(obj, data)
            return out if e is None else replace(out, taints=out.taints | {e})
        if meth in EVAL_METHODS and obj.kind == "model":
            data = self.combine(data_args[:2])
            if data.kind == "data":
                self.check_mix_fit(obj, data)
                e = self.overlap(obj, data)
                if e is not None:
                    self.confirm_overlaps(frozenset({e}), f"{obj.cls}.{meth}")
                return self.evaluation(replace(data, taints=data.taints | frozenset(
                    obj.events)), node)
            return CONST
        if meth in ("get_params", "set_params"):
            return Val("object", obj=obj) if meth == "set_params" else CONST
        return UNKNOWN

    def fit_transformer(self, obj: Obj, data: Val, node: ast.Call) -> None:
        if obj.stateless:
            return
        line = node.lineno
        subject = data.subject
        if data.role == TEST:
            obj.events = {self.test_fit(
                obj, data, line, f"{obj.cls} is fitted on {subject or 'test data'}, which is "
                                 "test data: fit on train and only transform the test set")}
        elif data.role == MIX:
            self.report("fit_on_train_and_test", obj.family, obj.cls, line, subject,
                        f"{obj.cls} is fitted on {subject or 'data'}, which combines train and "
                        "test rows: fit on train only")
            obj.events = set()
        elif data.role == FULL or (data.role == TRAIN and not data.from_split):
            # unsplit rows, or rows a name calls train (``train.csv``) that no split has made:
            # pending until the data is split (then the fit saw the held-out rows)
            metric = "resampled_before_split" if obj.family == "resampler" \
                else "fit_before_split"
            obj.events = {self.new_event(metric, obj.family, obj.cls, line,
                                         subject, data.roots)}
        else:
            obj.events = set()
        obj.inner = None
        if data.role == TRAIN and data.from_split and data.roots:
            # the training part of a split: pending until that part is split again (an inner
            # cross-validation or validation split, whose held-out folds it has seen);
            # supervised fits (selection, target encoding, resampling) fail, others warn
            metric = "fit_before_split" if obj.family in _SUPERVISED else "fit_before_inner_split"
            obj.inner = (data.roots, self.new_event(
                metric, obj.family, obj.cls, line,
                f"{subject or 'the training part'}, the training part", data.roots))

    def fit_model(self, obj: Obj, data: Val, kwargs: dict[str, Val], node: ast.Call,
                  labelled: bool = True) -> None:
        for f in self.frames:
            f.fits = True
        if obj.search:
            self.confirm(data.taints, f"it is cross-validated inside {obj.cls}.fit")
        obj.events = set()
        if data.role == TEST:
            obj.events = {self.test_fit(obj, data, node.lineno,
                                        f"{obj.cls} is trained on {data.subject or 'test data'}"
                                        ", which is test data")}
        elif data.role == MIX:
            obj.mix_fits.append((node.lineno, data.holdouts, data.subject))
        else:
            obj.mix_fits = []
        # a model fitted with a label (an anomaly detector scored on its own rows is how
        # unsupervised models are evaluated)
        obj.trained_on = (node.lineno, data.roots, data.subject) \
            if labelled and data.kind == "data" and data.role == FULL and data.roots else None
        monitored = self.combine([kwargs[k] for k in ("eval_set", "validation_data")
                                  if k in kwargs])
        stops = obj.early_stop or any(k in kwargs for k in ("early_stopping_rounds",
                                                            "callbacks"))
        if monitored.kind == "data" and monitored.role in (TEST, MIX) and stops:
            self.selections.append(Selection(
                node.lineno, monitored.subject, monitored.holdouts, frozenset(),
                how=f"{obj.cls} stops early on the test set ({monitored.subject})",
                early_stop=True))

    def test_fit(self, obj: Obj, data: Val, line: int, why: str) -> int:
        """A ``fit_on_test`` event, reported once the rows it was fitted on are evaluated
        (a metric or ``.score`` of the same test set, with what the fit made): fitting on
        Kaggle's unlabelled test.csv, or training on one half and scoring on the other
        (two-fold validation), evaluates nothing on the rows fitted."""
        e = self.new_event("fit_on_test", obj.family, obj.cls, line, data.subject, data.roots)
        self.test_fits[e] = (data.holdouts, why)
        return e

    def check_mix_fit(self, obj: Obj, data: Val) -> None:
        if data.role != TEST:
            return
        for line, holdouts, subject in obj.mix_fits:
            if holdouts & data.holdouts:
                self.report("fit_on_train_and_test", "model", obj.cls, line, subject,
                            f"{obj.cls} is trained on {subject or 'data'}, which includes the "
                            f"test rows it is evaluated on at {self.loc(self.line)}")

    def overlap(self, obj: Obj, data: Val) -> int | None:
        """An ``evaluated_on_training_rows`` event when model ``obj``, fitted on unsplit rows,
        is applied to rows of the same data (all of them, or a split part: the fit held
        them all); None otherwise. Reported once the output reaches a metric."""
        if obj.trained_on is None or data.kind != "data" or data.role == TRAIN:
            return None
        line, roots, subject = obj.trained_on
        if not roots & data.roots:
            return None
        part = "" if data.role == FULL else f", including the {data.role} rows"
        return self.new_event("evaluated_on_training_rows", "model", obj.cls, line,
                              f"{subject or 'the data'}{part}", roots)

    def confirm_overlaps(self, taints: frozenset[int], how: str) -> None:
        """Report the ``evaluated_on_training_rows`` events among ``taints``: a score of a
        model on rows it was trained on (at the scoring line, naming the fit)."""
        for e in sorted(taints):
            ev = self.events[e]
            if ev.metric != "evaluated_on_training_rows" or ev.reported:
                continue
            ev.reported = True
            self.report(ev.metric, ev.family, ev.cls, self.line, ev.subject,
                        f"{ev.cls} is scored ({how}) on rows it was trained on at "
                        f"{self.loc(ev.line)} ({ev.subject}): a score on training rows "
                        "says little about new data; fit on the train part of a split (or "
                        "inside cross-validation) and score on rows the model never saw")

    def evaluation(self, data: Val, node: ast.Call) -> Val:
        if data.kind == "data":
            self.confirm_overlaps(data.taints, f"{_dotted(node.func) or 'a metric'}")
            for e in sorted(data.taints & self.test_fits.keys()):
                ev, (holdouts, why) = self.events[e], self.test_fits[e]
                if not ev.reported and holdouts & data.holdouts:
                    ev.reported = True
                    self.report(ev.metric, ev.family, ev.cls, ev.line, ev.subject, why)
        if data.kind != "data" or data.role not in (TEST, MIX) or not data.holdouts:
            return self.combine([data]) if data.kind == "score" else CONST
        eid = len(self.eval_info)
        self.eval_info.append((node.lineno, data.holdouts, data.subject))
        for f in self.frames:
            f.evals.append(eid)
        for sel in self.selections:
            if sel.early_stop and not sel.reported and sel.holdouts & data.holdouts:
                self.report_selection(sel, f"the same test set is evaluated again at "
                                           f"{self.loc(node.lineno)}")
        return Val("score", evals=frozenset({eid}))

    # -- user functions ------------------------------------------------------------------------
    def call_user(self, fv: Val, args: list[Val], kwargs: dict[str, Val]) -> Val:
        fn = fv.node
        if id(fn) in self.active or len(self.active) >= 4:
            return UNKNOWN
        params = _all_args(fn)
        bound: dict[str, Val] = {}
        positional = [a.arg for a in fn.args.posonlyargs + fn.args.args]
        for name, v in zip(positional, args):
            bound[name] = v
        for name, v in kwargs.items():
            bound[name] = v
        for a in params:
            if a.arg not in bound:
                bound[a.arg] = CONST
        return self.run_function(fn, bound)

    def run_function(self, fn: Any, bound: dict[str, Val]) -> Val:
        self.analysed.add(id(fn))
        self.active.append(id(fn))
        cls = self.method_class.get(id(fn))
        attrs = self.class_attrs.setdefault(cls, {}) if cls is not None else {}
        self.scopes.append({**attrs, **bound})
        self.returns.append([])
        saved = self.line
        try:
            self.block(fn.body)
        finally:
            scope = self.scopes.pop()
            if cls is not None:  # the instance's attributes, for the class's other methods
                attrs.update({k: v for k, v in scope.items() if k.startswith("self.")})
            rets = self.returns.pop()
            self.active.pop()
            self.line = saved
        if not rets:
            return CONST
        return rets[-1]


# -- helpers ----------------------------------------------------------------------------------
_SPLIT_FUNC = re.compile(r"(^|_)split(s|ted)?(_|$)", re.IGNORECASE)  # split_data, time_split
_NOT_ROW_SPLIT = re.compile(  # text, path and column splitters (split_X_y, split_features)
    r"(^|_)(sentences?|words?|text|tokens?|strings?|str|lines?|names?|path|x_?y|xy|features?|"
    r"targets?|labels?|columns?|cols)(_|$)", re.IGNORECASE)
_SUPERVISED = {"selector", "target_encoder"}  # fits that read the label
_FUNCTION_APPLY = {"apply", "transform", "agg", "aggregate", "pipe"}
_WRITERS = {"to_csv", "to_parquet", "to_pickle", "to_feather", "to_json", "to_excel",
            "to_hdf", "to_orc"}


def _flag_role(node: ast.expr) -> str | None:
    """The part a mask on a train/test flag selects: ``df[df.is_train == 1]`` (or
    ``df.loc[df["is_test"] == 0]``, ``df[df.is_train]``) -> train or test; None otherwise."""
    if not isinstance(node, ast.Subscript):
        return None
    mask = node.slice
    flag, value = mask, True
    if isinstance(mask, ast.Compare) and len(mask.ops) == 1 \
            and isinstance(mask.ops[0], (ast.Eq, ast.NotEq)):
        const = _const(mask.comparators[0])
        if not isinstance(const, (bool, int)):
            return None
        flag, value = mask.left, bool(const) == isinstance(mask.ops[0], ast.Eq)
    name = (flag.attr if isinstance(flag, ast.Attribute) else
            _const(flag.slice) if isinstance(flag, ast.Subscript) else None)
    if not isinstance(name, str):
        return None
    role = role_hint(name)
    if role not in (TRAIN, TEST):
        return None
    return role if value else (TEST if role == TRAIN else TRAIN)


def _masked(node: ast.expr | None) -> bool:
    """Whether ``node`` selects rows by a boolean mask (``df[df.y == 0]``,
    ``df.loc[df.y == 0]``, ``df.query("y == 0")``): a subset such as one class's rows."""
    if isinstance(node, ast.Subscript):
        sl = node.slice
        return isinstance(sl, (ast.Compare, ast.BoolOp)) or (
            isinstance(sl, ast.UnaryOp) and isinstance(sl.op, ast.Invert))
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
        and node.func.attr == "query"


def _joined(a: Val | None, b: Val | None) -> Val:
    """A variable's value after an ``if``/``else`` that bound it to ``a`` in one branch and
    ``b`` in the other (either may be unbound): data of one role keeps what either branch
    carries (taints, roots, holdouts: an upsampling in one branch is not undone by the
    other); otherwise the ``else`` branch's, walked last."""
    if a is None or b is None:
        out = a if b is None else b
        assert out is not None
        return out
    if a is b or a.kind != "data" or b.kind != "data" or a.role != b.role:
        return b
    return replace(b, taints=a.taints | b.taints, roots=a.roots | b.roots,
                   holdouts=a.holdouts | b.holdouts)


def _flatten(vals: Iterable[Val], depth: int = 0) -> Iterable[Val]:
    for v in vals:
        if v.kind in ("tuple", "dict", "iter") and depth < 4:
            yield from _flatten(v.items, depth + 1)
        else:
            yield v


def _const(node: ast.expr | None) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    return None


def _kw(node: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in node.keywords if k.arg == name), None)


def _const_kw(node: ast.Call, name: str) -> Any:
    return _const(_kw(node, name))


def _dotted(node: ast.expr) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return ".".join([node.id, *reversed(parts)])
    return None


def _base_name(node: ast.expr) -> str | None:
    """The variable a subscript/attribute chain modifies (``df`` of ``df.loc[m, "a"]``)."""
    while isinstance(node, (ast.Subscript, ast.Attribute, ast.Call)):
        if isinstance(node, ast.Call):
            node = node.func
            continue
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and node.attr not in PASS_ATTRS and node.attr not in ("loc", "iloc"):
            dotted = _dotted(node)
            return dotted
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _subject(call: ast.Call, data: Val, target: str | None = None) -> str:
    """What a fit is applied to, as written: a variable, a column, the variable the result is
    assigned to, or the expression."""
    arg = call.args[0] if call.args else next(
        (k.value for k in call.keywords if k.arg in ("X", "raw_documents", "x")), None)
    if isinstance(arg, ast.Name):
        return arg.id
    if isinstance(arg, ast.Subscript) and isinstance(_const(arg.slice), str):
        return str(_const(arg.slice))
    if arg is None:
        return data.subject
    if target:
        return target
    text = ast.unparse(arg)
    return text if len(text) <= 60 else text[:59] + "…"


def _all_args(fn: Any) -> list[ast.arg]:
    a = fn.args
    out = list(a.posonlyargs) + list(a.args) + list(a.kwonlyargs)
    if a.vararg:
        out.append(a.vararg)
    if a.kwarg:
        out.append(a.kwarg)
    return out
