"""One renderer interface for what the analyses write: a result object renders itself with ``to_markdown()``, and
``to_latex()`` / ``to_csv()`` where it holds a table, as :class:`~pyterrier_frechet.analyses.table.PaperTable` does.

**Dialects**: a :class:`Dialect` says how one format writes a table — its cells' text (escaping, numbers, bold,
intervals, marks) and its lines — and :meth:`Dialect.table` is the one loop that writes a table's rows: the paper
table's Markdown and LaTeX, and the LaTeX of every report table, go through it with :data:`MARKDOWN` and
:data:`LATEX`; a report table's Markdown goes through it with :class:`Pipe` (tabulate's padded pipe table, as
``DataFrame.to_markdown``).

**Sections**: the report is a list of :class:`Section` objects, computed first and rendered after: each holds its
title and its blocks in order (:class:`Text`, :class:`Bullets`, :class:`Figure`, :class:`Table`, or any object with
``to_markdown()``, such as a PaperTable), the CSV files it writes beside the report and the renderables written
whole (``STEM.md``, ``STEM.tex``, ``STEM.csv``). :class:`Report` renders the sections into ``report.md`` and writes
every file they list.
"""
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
import pandas as pd

from .outputs import markdown_text, to_csv


# --- LaTeX text ---

_LATEX_SPECIAL = {'\\': r'\textbackslash{}', '&': r'\&', '%': r'\%', '$': r'\$', '#': r'\#', '_': r'\_',
                  '{': r'\{', '}': r'\}', '~': r'\textasciitilde{}', '^': r'\textasciicircum{}'}
# Unicode the package's own sentences use, as pdflatex reads it (after the special characters are escaped)
_LATEX_UNICODE = [
    ('E[FD̂ₙ]', r'$\mathrm{E}[\widehat{\mathrm{FD}}_n]$'), ('E[θ̂ₙ]', r'$\mathrm{E}[\hat\theta_n]$'),
    ('t·s/√n', r'$t \cdot s/\sqrt{n}$'), ('√', r'$\surd$'), ('·', r'$\cdot$'),
    ('τ', r'$\tau$'), ('α', r'$\alpha$'), ('θ', r'$\theta$'), ('Σ', r'$\Sigma$'), ('≤', r'$\le$'), ('≥', r'$\ge$'),
    ('±', r'$\pm$'), ('×', r'$\times$'), ('−', '--'), ('—', '---'), ('–', '--'), ('…', r'\ldots{}'),
    ('▲', r'$\blacktriangle$'), ('▼', r'$\blacktriangledown$'), ('†', r'\dag{}'), ('‡', r'\ddag{}'), ('→', r'$\to$'),
    ('↑', r'$\uparrow$'), ('↓', r'$\downarrow$'), ('⇄', r'$\rightleftarrows$'),
]


def latex_text(value) -> str:
    """Text as LaTeX source that pdflatex typesets whatever ``value`` holds: ``\\ & % $ # _ { } ~ ^`` escaped, the
    Unicode the package's sentences use (τ, α, E[FD̂ₙ], dashes, …) as LaTeX commands; control and format characters
    (line breaks, BEL, ESC, bidirectional overrides, zero-width marks, U+2028/2029) as one space — a blank line would
    end the caption's paragraph —; Latin letters (U+00A0–U+017F) left for the engine (UTF-8); any other character as
    ``[U+XXXX]``, which every engine prints."""
    text = ''.join(_LATEX_SPECIAL.get(ch, ch) for ch in str(value))
    for uni, tex in _LATEX_UNICODE:
        text = text.replace(uni, tex)
    return ''.join(_latex_char(ch) for ch in text)


def _latex_char(ch: str) -> str:
    code = ord(ch)
    if 0x20 <= code < 0x7F:
        return ch
    if unicodedata.category(ch)[0] in 'CZ':  # controls, format, separators (U+00A0 too: a space)
        return ' '
    if 0xA0 < code <= 0x17F:
        return ch
    return f'[U+{code:04X}]'


#: System names longer than this are shortened in the LaTeX table (``table.csv`` keeps them whole).
LATEX_NAME_CHARS = 60


def latex_name(name: str) -> str:
    """A system name as a LaTeX cell: :func:`latex_text`, first shortened to :data:`LATEX_NAME_CHARS` characters
    (``…`` at the end) so that no name can push the table off the page; ``{}`` before a leading ``[``, which LaTeX
    would read as the optional argument of the ``\\\\`` or ``\\midrule`` before it."""
    name = str(name)
    text = latex_text(name if len(name) <= LATEX_NAME_CHARS else name[:LATEX_NAME_CHARS - 1] + '…')
    return '{}' + text if text.lstrip().startswith('[') else text


# --- dialects: how one format writes a table ---

class Dialect:
    """How one format writes a table: the text of its cells and its lines. :meth:`table` is the row loop every table
    is written with; a table builds its rows of cell text with the dialect's cell methods and hands them to it."""

    #: the text of an undefined number, and of a cell with nothing to show
    missing = '–'

    def text(self, value) -> str:
        """Text escaped for the format."""
        raise NotImplementedError

    def name(self, value) -> str:
        """A system name as a cell."""
        return self.text(value)

    def number(self, value: float, places: int) -> str:
        """A number with ``places`` decimals (:attr:`missing` where it is not finite)."""
        return self.signed(f'{value:.{places}f}') if np.isfinite(value) else self.missing

    def signed(self, number: str) -> str:
        """A formatted number as the format writes it (its minus sign)."""
        return number

    def value(self, value, floatfmt: str) -> str:
        """A frame's cell: text escaped, a number in ``floatfmt`` (:attr:`missing` where NaN), anything else as
        ``str``."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
            return self.text('' if value is None else value)
        if not np.isfinite(value):
            return self.missing
        if isinstance(value, (int, np.integer)):  # a count stays a count (as the Markdown table's tabulate shows it)
            return self.signed(str(int(value)))
        return self.signed(format(value, floatfmt))

    def bold(self, text: str) -> str:
        raise NotImplementedError

    def bracket(self, inside: str) -> str:
        """What follows a value for its interval: `` [inside]`` in a smaller size where the format has one."""
        raise NotImplementedError

    def outside(self) -> str:
        """The mark of a value outside its interval (†)."""
        raise NotImplementedError

    def marks(self, sig: str, letters: bool) -> str:
        """Significance marks after a cell: the letters of the systems it beats (``letters``), or ▲ / ▼."""
        raise NotImplementedError

    def contradiction(self) -> str:
        """The mark of an FD cell whose paired test contradicts a classical measure's (⇄)."""
        raise NotImplementedError

    def left_out(self, n: int, over: bool) -> str:
        """What follows a cell whose sets lost ``n`` documents for want of a vector (``over``: past the share that
        earns ‡)."""
        raise NotImplementedError

    def line(self, cells: Sequence[str]) -> str:
        """One row of cell text as a line."""
        raise NotImplementedError

    def begin(self, head: Sequence[str], align: str) -> List[str]:
        """The lines before the rows: the header (cell text) and what the format needs around it. ``align``: one
        letter per column, ``l``, ``c`` or ``r``."""
        raise NotImplementedError

    between: Tuple[str, ...] = ()  # the lines between two groups of rows
    end: Tuple[str, ...] = ()      # the lines after the rows

    def table(self, head: Sequence[str], align: str, *groups: Sequence[Sequence[str]]) -> List[str]:
        """The table's lines: :meth:`begin`, each group of rows one :meth:`line` per row (groups separated by
        :attr:`between`; an empty group is left out), :attr:`end`. The one row loop of every table the analyses
        write."""
        lines = self.begin(head, align)
        for i, rows in enumerate([g for g in groups if len(g)]):
            lines += list(self.between) if i else []
            lines += [self.line(row) for row in rows]
        return lines + list(self.end)


class _Markdown(Dialect):
    """Markdown (GitHub pipe tables): ``markdown_text`` escaping, ``**bold**``, Unicode marks."""

    def text(self, value) -> str:
        return markdown_text(value, cell=True)

    def bold(self, text: str) -> str:
        return f'**{text}**'

    def bracket(self, inside: str) -> str:
        return f' [{inside}]'

    def outside(self) -> str:
        return '†'

    def marks(self, sig: str, letters: bool) -> str:
        return ' ' + (sig if not letters else ''.join(_SUPERSCRIPT.get(ch, ch) for ch in sig))

    def contradiction(self) -> str:
        return ' ⇄'

    def left_out(self, n: int, over: bool) -> str:
        return f' (−{n}{"‡" if over else ""})'

    def line(self, cells: Sequence[str]) -> str:
        return '| ' + ' | '.join(cells) + ' |'

    def begin(self, head: Sequence[str], align: str) -> List[str]:
        # right-aligned columns '--:', every other one left-aligned ':--'
        return [self.line(head), '|' + '|'.join('--:' if a == 'r' else ':--' for a in align) + '|']


class _LaTeX(Dialect):
    """LaTeX with booktabs rules: ``latex_text`` escaping, ``\\textbf``, ``\\scriptsize`` intervals, math marks."""

    missing = '--'
    between = ('\\midrule',)
    end = ('\\bottomrule', '\\end{tabular}')

    def text(self, value) -> str:
        return latex_text(value)

    def name(self, value) -> str:
        return latex_name(value)

    def signed(self, number: str) -> str:
        return ('$-$' + number[1:]) if number.startswith('-') else number

    def bold(self, text: str) -> str:
        return f'\\textbf{{{text}}}'

    def bracket(self, inside: str) -> str:
        return f' {{\\scriptsize [{inside}]}}'

    def outside(self) -> str:
        return '\\textsuperscript{\\dag}'

    def marks(self, sig: str, letters: bool) -> str:
        return ('$^{\\mathrm{' + sig + '}}$' if letters else
                '$^{\\blacktriangle}$' if sig == '▲' else '$^{\\blacktriangledown}$')

    def contradiction(self) -> str:
        return '$^{\\rightleftarrows}$'

    def left_out(self, n: int, over: bool) -> str:
        dag = '\\ddag{}' if over else ''
        return f' {{\\scriptsize ($-${n}{dag})}}'

    def line(self, cells: Sequence[str]) -> str:
        return ' & '.join(cells) + ' \\\\'

    def begin(self, head: Sequence[str], align: str) -> List[str]:
        return [f'\\begin{{tabular}}{{{align}}}', '\\toprule', self.line(head), '\\midrule']


@dataclass(frozen=True)
class Pipe(_Markdown):
    """Markdown as ``DataFrame.to_markdown`` writes it (tabulate's pipe table: columns padded to one width, numbers
    in ``floatfmt`` and aligned on the decimal point): the report's tables. Its cells are the frame's values, text
    escaped, numbers left for tabulate to format."""

    floatfmt: str = '.4g'

    def value(self, value, floatfmt: str = None):
        return markdown_text(value, cell=True) if isinstance(value, str) else value

    def table(self, head: Sequence[str], align: str, *groups) -> List[str]:
        from tabulate import tabulate
        rows = [list(row) for rows in groups for row in rows]
        return tabulate(rows, headers=list(head), tablefmt='pipe', floatfmt=self.floatfmt,
                        showindex=False).split('\n')


#: The dialects of the paper table and of every report table's LaTeX.
MARKDOWN, LATEX = _Markdown(), _LaTeX()

# the superscript letters and digits of the paper table's significance marks (ranx-style)
_SUPERSCRIPT = dict(zip('abcdefghijklmnoprstuvwxyz', 'ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻ'))
_SUPERSCRIPT.update(zip('0123456789', '⁰¹²³⁴⁵⁶⁷⁸⁹'))


# --- the blocks of a section ---

@dataclass(frozen=True)
class Text:
    """A paragraph, already Markdown."""
    text: str

    def to_markdown(self) -> str:
        return self.text


@dataclass(frozen=True)
class Bullets:
    """A list, one ``- item`` per line (items already Markdown); no items: nothing."""
    items: Tuple[str, ...]

    def to_markdown(self) -> str:
        return '\n'.join(f'- {item}' for item in self.items)


@dataclass(frozen=True)
class Figure:
    """A figure drawn into ``figures/NAME.png`` (and ``.pdf``), shown with its alternative text."""
    alt: str
    name: str

    def to_markdown(self) -> str:
        return f'![{self.alt}](figures/{self.name}.png)'


@dataclass(frozen=True)
class Table:
    """A frame shown as a table: Markdown as :class:`Pipe` with ``floatfmt``, LaTeX (booktabs), CSV; ``name``: the
    stem of its CSV file beside the report (None: shown only)."""
    frame: pd.DataFrame
    name: Optional[str] = None
    floatfmt: str = '.4g'

    def _render(self, dialect: Dialect) -> List[str]:
        frame = self.frame
        head = [dialect.text(str(c)) for c in frame.columns]
        align = ''.join('r' if pd.api.types.is_numeric_dtype(frame[c]) and not pd.api.types.is_bool_dtype(frame[c])
                        else 'l' for c in frame.columns)
        rows = [[dialect.value(v, self.floatfmt) for v in row] for row in frame.values]
        return dialect.table(head, align, rows)

    def to_markdown(self) -> str:
        return '\n'.join(self._render(Pipe(self.floatfmt)))

    def to_latex(self) -> str:
        """A booktabs ``tabular`` (needs ``\\usepackage{booktabs}``): text escaped, numbers in ``floatfmt``."""
        return '\n'.join(self._render(LATEX)) + '\n'

    def to_csv(self, path=None) -> Optional[str]:
        """The frame as CSV (:func:`~pyterrier_frechet.analyses.outputs.to_csv`: safe to open in a spreadsheet)."""
        return to_csv(self.frame, path)


# --- sections and the report ---

@dataclass(frozen=True)
class Section:
    """One section of a report, computed: its ``title`` (a heading of ``level``), its ``blocks`` in order (each has
    ``to_markdown()``), the frames it writes beside the report as ``NAME.csv`` without showing them (``data``), and
    the renderables written whole (``documents``: ``STEM.md``, and ``STEM.tex`` / ``STEM.csv`` where the object has
    ``to_latex`` / ``to_csv``). Drawing its figures is part of computing it; rendering writes text only."""
    title: str
    blocks: Tuple = ()
    data: Tuple[Tuple[str, pd.DataFrame], ...] = ()
    documents: Tuple[Tuple[str, object], ...] = ()
    level: int = 2

    def to_markdown(self) -> str:
        """The heading, then each block followed by a blank line (a block with no text leaves the blank line)."""
        lines = ['#' * self.level + ' ' + self.title, '']
        for block in self.blocks:
            text = block.to_markdown()
            lines += [text, ''] if text else ['']
        return '\n'.join(lines)

    def tables(self) -> List[Table]:
        """The section's :class:`Table` blocks, in order."""
        return [b for b in self.blocks if isinstance(b, Table)]

    def to_latex(self) -> str:
        """Each of its tables as a booktabs ``tabular``, in order ('' when it shows none)."""
        return '\n'.join(t.to_latex() for t in self.tables())

    def files(self) -> Dict[str, str]:
        """File name beside the report → text: ``NAME.csv`` of each named table and of ``data``, then each
        document's ``STEM.md`` (and ``.tex``, ``.csv``)."""
        out = {f'{t.name}.csv': t.to_csv() for t in self.tables() if t.name}
        out.update({f'{name}.csv': to_csv(frame) for name, frame in self.data})
        for stem, doc in self.documents:
            out[f'{stem}.md'] = doc.to_markdown()
            if hasattr(doc, 'to_latex'):
                out[f'{stem}.tex'] = doc.to_latex()
            if hasattr(doc, 'to_csv'):
                out[f'{stem}.csv'] = doc.to_csv()
        return out


@dataclass(frozen=True)
class Report:
    """Sections in order, rendered as one Markdown document and the files beside it."""
    sections: Tuple[Section, ...]

    def to_markdown(self) -> str:
        return '\n'.join(s.to_markdown() for s in self.sections)

    def files(self) -> Dict[str, str]:
        """Every file the sections list (:meth:`Section.files`), by name."""
        out: Dict[str, str] = {}
        for section in self.sections:
            out.update(section.files())
        return out

    def write(self, folder, name: str = 'report.md') -> Path:
        """Write ``folder/name`` and every file of :meth:`files` (UTF-8; CSV text as pandas wrote it); the path of
        the report."""
        folder = Path(folder)
        for file, text in self.files().items():
            with open(folder / file, 'w', encoding='utf-8', newline='' if file.endswith('.csv') else None) as f:
                f.write(text)
        (folder / name).write_text(self.to_markdown(), encoding='utf-8')
        return folder / name


__all__ = ['Bullets', 'Dialect', 'Figure', 'LATEX', 'LATEX_NAME_CHARS', 'MARKDOWN', 'Pipe', 'Report', 'Section',
           'Table', 'Text', 'latex_name', 'latex_text']
