"""Job ads printed as condor_q and condor_history print them for ``-af``, ``-format`` and
``-long``: each expression evaluated with classad2 against the job's ad, and values written in
the old ClassAd syntax HTCondor's tools use (``{ 1,"a" }``, ``1.5E-07``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import NamedTuple

import classad2

from crabtui.queue_format import Column

# condor_q and condor_history evaluate with HTCondor's ClassAd extensions: MY. naming the job's own
# ad, CurrentTime, split(), splitUserName(), stringListMember() and the rest. The bindings load them
# with their first old-syntax parse; ads built otherwise (a query's, from the embedded schedd) would
# find them undefined.
classad2.parseOne("MyType = \"Job\"", classad2.ParserType.Old)

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "a": "\a", "f": "\f", "v": "\v", '"': '"', "'": "'"}
_PRINTF = re.compile(r"%(?P<spec>[-+ #0]*\d*(?:\.\d+)?)(?P<type>[diouxXcfeEgGsvVr])")


class FormatError(ValueError):
    """An expression or format the tool would refuse; the message names it."""


def unparse(value) -> str:
    """A value in the old ClassAd syntax, as HTCondor's tools print it."""
    scratch = classad2.ClassAd()
    scratch["v"] = value
    return scratch.printOld()[4:].rstrip("\n")


def expression(text: str) -> classad2.ExprTree:
    try:
        return classad2.ExprTree(text)
    except Exception:
        raise FormatError(f"{text!r} is not a ClassAd expression (an attribute name, or one like "
                          "'RemoteUserCpu/60')") from None


def _job_attribute(ref: str) -> str:
    """The job attribute a reference names, for a query's projection: ``MY.JobStatus`` is
    ``JobStatus``, as a 23.9.6 schedd reads it; a ``TARGET.`` one is no job's ("")."""
    scope, dot, name = ref.partition(".")
    if dot and scope.lower() == "my":
        return name
    return "" if dot and scope.lower() == "target" else ref


def _references(trees: Iterable[classad2.ExprTree]) -> set[str]:
    """The job attributes the expressions read."""
    scratch = classad2.ClassAd()
    return {n for tree in trees for n in map(_job_attribute, scratch.externalRefs(tree)) if n}


def evaluate(ad: classad2.ClassAd, text: str, tree: classad2.ExprTree):
    """The expression's value in the ad (an attribute name is looked up directly)."""
    if text in ad:
        return ad.eval(text)
    return tree.eval(scope=ad)


def text_of(ad: classad2.ClassAd, text: str, tree: classad2.ExprTree, style: str) -> str:
    """``v``: strings as they are, other values unparsed; ``V``: strings quoted too; ``r``: the
    attribute's expression unevaluated (or the expression itself)."""
    if style == "r":
        if text in ad:
            return unparse(ad.lookup(text))
        return "undefined" if re.fullmatch(r"[A-Za-z_][\w.]*", text) else repr(tree)
    found = evaluate(ad, text, tree)
    if isinstance(found, str) and style == "v":
        return found
    return unparse(found)


class AutoFormat:
    """``-af[:options] EXPR...``: one line per job (``j`` id first, ``h`` headings, ``l``
    labels, ``V`` quoted strings, ``r`` raw expressions, ``t`` tabs, ``,`` commas, ``n`` one
    value per line, ``g`` a blank line between jobs)."""

    def __init__(self, exprs: Sequence[str], options: str = ""):
        self.exprs: list[tuple[str, classad2.ExprTree]] = []
        self.cells: list[tuple[str, classad2.ExprTree] | None] = []  # None: the job id
        self.columns: list[Column] = []
        self.headed: list[bool] = []  # whether a column was added once headings were asked for
        self.headings = self.job_id = False
        self._add(exprs, options)

    def _add(self, exprs: Sequence[str], options: str) -> None:
        self.row_prefix, self.col_prefix, self.col_suffix = "", " ", ""
        self.label = False
        self.style = "v"
        for flag in options:
            if flag == ",":
                self.col_suffix = ","
            elif flag == "n":
                self.col_suffix = "\n"
            elif flag == "g":
                self.col_prefix, self.row_prefix = "", "\n"
            elif flag == "t":
                self.col_prefix = "\t"
            elif flag == "l":
                self.label = True
            elif flag == "V" and self.style != "r":
                self.style = "V"
            elif flag in "ro":
                self.style = "r"
        self.headings = self.headings or "h" in options
        if "j" in options and not self.job_id:
            self.job_id = True
            self._column(None, " ID", 8)  # as wide as the "%4d.%-3d" its ids print in, even over no job
        for text in exprs:
            self.exprs.append((text, expression(text)))
            # condor_q names a column by its expression only in an -af with h; one added after
            # an earlier h is headed "(expr)", one added before it has no heading at all
            self._column(self.exprs[-1], text if "h" in options else "(expr)", len(text) if "h" in options else 6)

    def _column(self, cell: tuple[str, classad2.ExprTree] | None, heading: str, width: int) -> None:
        self.cells.append(cell)
        self.headed.append(self.headings)
        self.columns.append(Column(heading, width, left=True, auto=True) if self.headings else Column("", 0, left=True))

    def with_printf(self, pairs: Sequence[tuple[str, str]], *, before: bool = False) -> AutoFormat:
        """``-format FMT EXPR`` on the same command line as ``-af``: condor_q 23.9.6 prints each
        in its place on the -af's line, separated as the -af's columns are, unpadded and unheaded
        (``-af ProcId -format '%s|' JobStatus`` prints ``0 5|``)."""
        cells = [_Printf(_unescape(fmt), text, expression(text)) for fmt, text in pairs]
        at = 0 if before else len(self.cells)
        self.cells[at:at] = cells
        self.headed[at:at] = [False] * len(cells)
        self.columns[at:at] = [Column("", 0, left=True) for _ in cells]
        return self

    def then(self, exprs: Sequence[str], options: str = "") -> AutoFormat:
        """A later ``-af`` on the same command line, as condor_q and condor_history 23.9.6 read it:
        its expressions (and its job id, for a first ``j``) are more columns of the same line, its
        separators replace the earlier ones, and an earlier ``j`` or ``h`` stays."""
        self._add(exprs, options)
        return self

    @property
    def attributes(self) -> set[str]:
        """The attributes a query fetches for these expressions: theirs and the job id's."""
        return self.references | {"ClusterId", "ProcId"}

    @property
    def references(self) -> set[str]:
        """The attributes the expressions read."""
        return _references([tree for _, tree in self.exprs]
                           + [cell.tree for cell in self.cells if isinstance(cell, _Printf)])

    def text(self, ads: Iterable[classad2.ClassAd], nested: Sequence[int | None] | None = None,
             heading_first: bool = False, unpadded_last: bool = False) -> str:
        """The lines for the jobs; with headings, the columns are as wide as their widest value
        (condor_q renders every job before it prints the heading line; condor_history,
        ``heading_first``, keeps its columns as wide as their headings alone).  ``nested`` gives,
        with condor_q -dag, each DAG node job's depth under DAGMan jobs: its third column is
        indented as the DAG view indents node names.  ``unpadded_last``: a job's last value is
        not padded to its column (condor_q -wide without a width; its heading line still is)."""
        first = self._heading_line() if heading_first else None
        rows = []
        for ad in ads:
            cells = []
            for cell, headed in zip(self.cells, self.headed):
                if cell is None:  # an ad without its id (a hand-written history file's) has a blank one, as on the pool
                    cluster, proc = ad.get("ClusterId"), ad.get("ProcId")
                    if not (isinstance(cluster, int) and isinstance(proc, int)):
                        cells.append("")
                    else:
                        cells.append(f"{cluster:4d}.{proc:<3d}" if headed else f"{cluster}.{proc}")
                    continue
                if isinstance(cell, _Printf):
                    cells.append(_printf(cell.fmt, ad, cell.text, cell.tree))
                    continue
                text, tree = cell
                shown = text_of(ad, text, tree, self.style)
                # An undefined value does not measure its column, but widens it as it is printed;
                # a quoted string (-af:V) widens it only by its text, as condor_q measures it unquoted.
                if shown in ("undefined", "error") and self._missing(ad, text, tree):
                    shown = _Bare(shown)
                elif self.style == "V" and shown.startswith('"'):
                    shown = _Quoted(shown)
                cells.append(shown)
            if self.label and not self.headings:
                names = ["ID" if cell is None else cell[0] for cell in self.cells]
                cells = [cell if isinstance(source, _Printf)  # a -format prints as it says, unlabelled
                         else f"{name} = {cell}" if cell or source is not None else ""  # no "ID = " for a blank id
                         for name, source, cell in zip(names, self.cells, cells)]
            rows.append(cells)
        if self.headings and not heading_first:  # condor_history's columns stay as wide as their headings
            for index, column in ((i, c) for i, c in enumerate(self.columns) if self.headed[i]):
                column.width = max([column.width] + [len(cells[index]) - 2 * isinstance(cells[index], _Quoted)
                                                     for cells in rows if not isinstance(cells[index], _Bare)])
        for cells, depth in zip(rows, nested or ()):
            if depth is not None and len(cells) > 2:
                prefix = " " * depth + "|-"
                cells[2] = prefix + cells[2][:max(0, 14 - len(prefix))]
        if not self.headings:
            return "".join(self._join(cells) for cells in rows)
        out = [first or self._heading_line()]
        # condor_q measures its columns by the values before it prints, then prints the rows in
        # order: an undefined value wider than its column widens it for the rows after it
        last = len(self.columns) - 1 if unpadded_last else -1
        out += [self._join([cell if index == last else column.cell(cell)
                            for index, (column, cell) in enumerate(zip(self.columns, cells))]) for cells in rows]
        return "".join(out)

    def _heading_line(self) -> str:
        """The headed columns' headings, each as wide as the column at its place counted from the
        first: condor_q 23.9.6 lays its headings out so, which shifts them left of their columns
        when an -af without h came first (`-af A -af:h B` heads A's column "B")."""
        headings = [column.heading for column, headed in zip(self.columns, self.headed) if headed]
        return self._join([heading.ljust(self.columns[index].width) for index, heading in enumerate(headings)])

    def _missing(self, ad: classad2.ClassAd, text: str, tree: classad2.ExprTree) -> bool:
        """Whether the value is undefined (or an error); -af:r prints the expression, never missing."""
        return self.style != "r" and isinstance(evaluate(ad, text, tree), classad2.Value)

    def _join(self, cells: Sequence[str]) -> str:
        parts = []
        for index, cell in enumerate(cells):
            if index:
                parts.append(self.col_prefix)
            parts.append(cell)
            if index < len(cells) - 1:
                parts.append(self.col_suffix)
        return self.row_prefix + "".join(parts) + "\n"


class _Printf(NamedTuple):
    """A ``-format`` among an ``-af``'s columns."""
    fmt: str
    text: str
    tree: classad2.ExprTree


class _Bare(str):
    """A value condor_q does not measure its heading by: undefined, or an error."""


class _Quoted(str):
    """A string value with the quotes -af:V puts around it."""


class PrintfFormat:
    """``-format FMT EXPR`` pairs: each job prints each format with the expression's value;
    a format whose value does not suit its conversion prints nothing (``%d`` of a string, ``%s``
    of an undefined value), ``%v`` prints any value, and text without a conversion always prints."""

    def __init__(self, pairs: Sequence[tuple[str, str]]):
        self.pairs = []
        for fmt, text in pairs:
            self.pairs.append((_unescape(fmt), text, expression(text)))

    @property
    def attributes(self) -> set[str]:
        return self.references | {"ClusterId", "ProcId"}

    @property
    def references(self) -> set[str]:
        return _references(tree for _, _, tree in self.pairs)

    def text(self, ads: Iterable[classad2.ClassAd]) -> str:
        out = []
        for ad in ads:
            for fmt, text, tree in self.pairs:
                out.append(_printf(fmt, ad, text, tree))
        return "".join(out)


def _printf(fmt: str, ad: classad2.ClassAd, text: str, tree: classad2.ExprTree) -> str:
    match = _PRINTF.search(fmt)
    if match is None:
        return fmt
    kind, spec = match["type"], match["spec"]
    head, tail = fmt[:match.start()], fmt[match.end():]
    if kind in "vVr":
        shown = text_of(ad, text, tree, {"v": "v", "V": "V", "r": "r"}[kind])
        return head + f"%{spec}s" % shown + tail
    found = evaluate(ad, text, tree)
    if isinstance(found, classad2.Value):
        return ""
    if kind in "diouxXc":
        if not isinstance(found, (int, float)):
            return ""
        return head + f"%{spec}{kind}" % int(found) + tail
    if kind in "feEgG":
        if not isinstance(found, (int, float)):
            return ""
        return head + f"%{spec}{kind}" % float(found) + tail
    return head + f"%{spec}s" % (found if isinstance(found, str) else unparse(found)) + tail


def _unescape(fmt: str) -> str:
    """The backslash escapes condor's -format reads (``\\n``, ``\\t``...)."""
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m[1], "\\" + m[1]), fmt)


def long_form(ads: Iterable[classad2.ClassAd], attributes: Sequence[str] = (), *, by_case: bool = False) -> str:
    """``-long``: every attribute (or only ``attributes``) as ``Name = value``, sorted by name,
    a blank line after each job.  condor_q sorts the names ignoring case; condor_history 23.9.6
    byte by byte (``by_case``: ``GPUsProvisioned`` before ``GlobalJobId``)."""
    wanted = {a.lower() for a in attributes}
    out = []
    for ad in ads:
        lines = [line for line in ad.printOld().splitlines() if line]
        if wanted:
            lines = [line for line in lines if line.partition(" = ")[0].lower() in wanted]
        lines.sort(key=lambda line: line.partition(" = ")[0] if by_case else line.partition(" = ")[0].lower())
        out.append("\n".join(lines) + "\n\n")
    return "".join(out)


def json_form(ads: Iterable[classad2.ClassAd], attributes: Sequence[str] = (), *, history: bool = False) -> str:
    """``-json`` as condor_q and condor_history print it: each ad's attributes (or only
    ``attributes``) sorted by name (condor_history's whole ads in the library's order, see
    ``_shown``), in the ClassAd library's JSON (expressions as ``"\\/Expr(...)\\/"``), between a
    ``[`` and a ``]`` line, a ``,`` line between two ads."""
    wanted = {a.lower() for a in attributes}
    blocks = ["{\n" + ",\n".join(_json_attribute(ad, name) for name in _shown(ad, wanted, stored=history)) + "\n}"
              for ad in ads]
    return "[\n" + "\n,\n".join(blocks) + ("\n" if blocks else "") + "]\n"


def json_lines(ads: Iterable[classad2.ClassAd], attributes: Sequence[str] = ()) -> str:
    """condor_history ``-jsonl``: each ad as its ``-json`` block on one line, indentation dropped."""
    wanted = {a.lower() for a in attributes}
    return "".join("{" + ",".join("".join(line.strip() for line in _json_attribute(ad, name).splitlines())
                                  for name in _shown(ad, wanted, stored=True)) + "}\n" for ad in ads)


def _shown(ad: classad2.ClassAd, wanted: set[str], *, by_case: bool = False, stored: bool = False) -> list[str]:
    """The ad's attribute names to show (all, or those in lower-case ``wanted``), sorted by name
    as the tools sort them: ignoring case, or (``by_case``, condor_history's) byte by byte.
    ``stored``: all of them in the order the ClassAd library keeps them (by length, then name
    ignoring case), which is how condor_history 23.9.6 prints a whole ad's JSON and XML."""
    if stored and not wanted:
        return list(ad.keys())
    return sorted((k for k in ad.keys() if not wanted or k.lower() in wanted), key=None if by_case else str.lower)


def _json_attribute(ad: classad2.ClassAd, name: str) -> str:
    """One attribute's ``"Name": value`` lines, indented as in its ad (a one-attribute ad's
    JSON: classad2 keeps no order of attributes for a whole ad's)."""
    one = classad2.ClassAd()
    one[name] = ad.lookup(name)
    return one.printJson()[2:-2]


XML_HEAD = '<?xml version="1.0"?>\n<!DOCTYPE classads SYSTEM "classads.dtd">\n<classads>\n'


def xml_form(ads: Iterable[classad2.ClassAd], attributes: Sequence[str] = (), *, history: bool = False) -> str:
    """``-xml`` as condor_q and condor_history print it: the ClassAd library's XML, each ad's
    attributes (or only ``attributes``) sorted by name as ``-long`` sorts them; condor_history
    puts a blank line before each ad and two after the list."""
    wanted = {a.lower() for a in attributes}
    out = [XML_HEAD]
    for ad in ads:
        names = _shown(ad, wanted, by_case=history, stored=history)
        out.append(("\n" if history else "") + "<c>\n" + "".join(_xml_attribute(ad, k, "    ") for k in names) + "</c>\n")
    out.append("\n</classads>\n\n" if history else "</classads>\n")
    return "".join(out)


def _xml_attribute(ad: classad2.ClassAd, name: str, indent: str) -> str:
    return f'{indent}<a n="{name}">{_xml_value(ad[name], indent)}</a>\n'


def _xml_value(value, indent: str) -> str:
    if value is classad2.Value.Undefined:  # an int too, so first
        return "<un/>"
    if value is classad2.Value.Error:
        return "<er/>"
    if isinstance(value, bool):
        return f'<b v="{"t" if value else "f"}"/>'
    if isinstance(value, int):
        return f"<i>{value}</i>"
    if isinstance(value, float):  # the library's "%.15E", and a zero as 0.0
        return f"<r>{'0.0' if value == 0 else f'{value:.15E}'}</r>"
    if isinstance(value, str):
        return f"<s>{_xml_escape(value)}</s>"
    if isinstance(value, list):
        return "<l>" + "".join(_xml_value(item, indent) for item in value) + "</l>"
    if isinstance(value, classad2.ClassAd):
        inner = "".join(_xml_attribute(value, k, indent + "    ") for k in value.keys())
        return f"<c>\n{inner}{indent}</c>"
    return f"<e>{_xml_escape(_unparsed(value))}</e>"


def _unparsed(expr: classad2.ExprTree) -> str:
    """An expression on one line as the ClassAd library writes it into JSON and XML (str() of an
    ExprTree breaks a list over several indented lines)."""
    one = classad2.ClassAd()
    one["e"] = expr
    return json.loads(one.printJson())["e"].removeprefix("/Expr(").removesuffix(")/")


def _xml_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
