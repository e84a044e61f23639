#!/usr/bin/env python3
"""The README and docs/*.md, read as a user reads them (test_docs.sh).

  docs_check.py links FILE...     every relative link of each FILE resolves: a file (or a
                                  directory) of the tree, and a #fragment a heading of the
                                  Markdown file it names; prints "ok NAME" / "not ok NAME # WHY"
  docs_check.py commands FILE...  every `hopbench ...` command line the FILEs' code blocks
                                  show, one a line: FILE:LINE, a tab, its words as JSON

A command line is a line of a code block (indented four spaces or more, or inside a ``` fence)
that starts with `hopbench` (or `$ hopbench`); a line that ends in a backslash goes on with the
next. Its words are split as a shell would (quotes kept, comments dropped) and end at the first
shell operator (a pipe, a redirection, `&`, `;`): what hopbench itself is given. A command
substitution, `$(...)`, is kept as that one word: what the shell would put there.
"""
import json
import os
import re
import shlex
import sys

LINK = re.compile(r'(?<!\!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)')
CMD = re.compile(r'^(?:\$ )?hopbench(?:\s|$)')


def code_lines(path):
    """(line number, text) of each line of a code block, fences' own lines left out."""
    fenced = False
    prev_blank = True
    in_indented = False
    with open(path, encoding='utf-8') as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip('\n')
            if line.lstrip().startswith('```'):
                fenced = not fenced
                prev_blank = False
                continue
            if fenced:
                yield n, line.strip()
                continue
            indented = line.startswith('    ') or line.startswith('\t')
            if indented and line.strip() and (prev_blank or in_indented):
                in_indented = True
                yield n, line.strip()
            elif line.strip():
                in_indented = False
            prev_blank = not line.strip()


def slug(heading):
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to '-'."""
    h = re.sub(r'[`*_]', lambda m: '_' if m.group(0) == '_' else '', heading.strip().lower())
    h = re.sub(r'[^\w\- ]', '', h)
    return h.replace(' ', '-')


def anchors(path):
    seen = {}
    out = set()
    fenced = False
    with open(path, encoding='utf-8') as f:
        for line in f:
            if line.lstrip().startswith('```'):
                fenced = not fenced
            if fenced:
                continue
            m = re.match(r'^#{1,6}\s+(.*?)\s*#*\s*$', line)
            if not m:
                continue
            s = slug(m.group(1))
            k = seen.get(s, 0)
            seen[s] = k + 1
            out.add(s if k == 0 else '%s-%d' % (s, k))
    return out


def links(files):
    bad = 0
    count = 0
    for path in files:
        base = os.path.dirname(path)
        code = {n for n, _ in code_lines(path)}
        with open(path, encoding='utf-8') as f:
            text = f.read()
        # inline code spans are not links
        for n, line in enumerate(text.split('\n'), 1):
            if n in code:
                continue
            line = re.sub(r'`[^`]*`', '', line)
            for m in LINK.finditer(line):
                target = m.group(1) or m.group(2)
                if re.match(r'^[a-z][a-z0-9+.-]*:', target):  # http:, mailto:
                    continue
                count += 1
                name = '%s:%d: link %s' % (path, n, target)
                file_part, _, frag = target.partition('#')
                dest = os.path.normpath(os.path.join(base, file_part)) if file_part else path
                if not os.path.exists(dest):
                    print('not ok %s # no file %s' % (name, dest))
                    bad += 1
                    continue
                if frag and dest.endswith('.md') and frag not in anchors(dest):
                    print('not ok %s # %s has no heading whose anchor is #%s' % (name, dest, frag))
                    bad += 1
                    continue
                print('ok %s' % name)
    print('ok %d relative links read' % count if count else 'not ok relative links read # none')
    return 1 if bad else 0


def commands(files):
    for path in files:
        lines = list(code_lines(path))
        i = 0
        while i < len(lines):
            n, text = lines[i]
            i += 1
            if not CMD.match(text):
                continue
            while text.endswith('\\') and i < len(lines) and lines[i][0] == lines[i - 1][0] + 1:
                text = text[:-1] + ' ' + lines[i][1]
                i += 1
            # a command substitution is one word the shell would fill in: $(...)
            text = re.sub(r'\$\([^()]*\)', '$(...)', text)
            lex = shlex.shlex(text, posix=True, punctuation_chars='|&;<>')
            lex.whitespace_split = True
            lex.commenters = '#'
            words = []
            for w in lex:
                if w and all(c in '|&;<>' for c in w):
                    break
                words.append(w)
            if words and words[0] == '$':
                words = words[1:]
            print('%s:%d\t%s' % (path, n, json.dumps(words[1:])))
    return 0


if __name__ == '__main__':
    if len(sys.argv) < 3 or sys.argv[1] not in ('links', 'commands'):
        sys.stderr.write('usage: docs_check.py links|commands FILE...\n')
        sys.exit(64)
    sys.exit(links(sys.argv[2:]) if sys.argv[1] == 'links' else commands(sys.argv[2:]))
