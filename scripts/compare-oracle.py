#!/usr/bin/env python3
"""Developer aid: runs the same calls through toolbelt and through Gemini CLI's real tools
(../shared/oracle) and prints any difference in what the model would see.

    python3 scripts/compare-oracle.py [--toolbelt target/debug/toolbelt] [CASE-FILTER]

Not part of the test suite (CI has no oracle); the project's tests pin the same behaviour.
"""
import json, os, subprocess, sys, tempfile, base64

HERE = os.path.dirname(os.path.abspath(__file__))
ORACLE = os.path.join(HERE, "..", "..", "shared", "oracle", "oracle")
TOOLBELT = os.path.join(HERE, "..", "target", "debug", "toolbelt")
args = sys.argv[1:]
if args[:1] == ["--toolbelt"]:
    TOOLBELT, args = args[1], args[2:]
FILTER = args[0] if args else ""

def mk(root, files):
    for name, content in files.items():
        p = os.path.join(root, name)
        if name.endswith("/"):
            os.makedirs(p, exist_ok=True)
            continue
        os.makedirs(os.path.dirname(p), exist_ok=True)
        if isinstance(content, tuple) and content[0] == "symlink":
            os.symlink(content[1], p)
        else:
            with open(p, "wb") as f:
                f.write(content if isinstance(content, bytes) else content.encode())

def norm(c):
    if isinstance(c, list):
        return [norm(x) for x in c]
    if isinstance(c, dict) and set(c) == {"text"}:
        return c["text"]
    return c

def model_view(result):
    if result.get("error"):
        e = result["error"]
        return {"error": e["message"] if isinstance(e, dict) else e}
    c = norm(result.get("llmContent"))
    return {"output": c, "display": result.get("returnDisplay")}

CASES = [
    ("ls-basic", {"file1.txt": "content1", "subdir/": None}, "list_directory", {"dir_path": "."}),
    ("ls-sort", {"a-file.txt": "x", "B.txt": "x", "_x": "x", "Z": "x", "fileA.txt": "x", "FileB.TXT": "x", "x-dir/": None, "10.txt": "1", "2.txt": "2", "é.txt": "", ".hidden": ""}, "list_directory", {"dir_path": "."}),
    ("ls-git", {".git": "", ".gitignore": "*.log", "file1.txt": "content1", "file2.log": "x", "dist/a.js": "", ".env": "S=1"}, "list_directory", {"dir_path": "."}),
    ("ls-git-off", {".git": "", ".gitignore": "*.log", "file2.log": "x"}, "list_directory", {"dir_path": ".", "file_filtering_options": {"respect_git_ignore": False}}),
    ("ls-ignore-param", {"a.log": "", "b.txt": "", "c.LOG": ""}, "list_directory", {"dir_path": ".", "ignore": ["*.log"]}),
    ("ls-empty", {"empty/": None}, "list_directory", {"dir_path": "empty"}),
    ("ls-file", {"f.txt": "x"}, "list_directory", {"dir_path": "f.txt"}),
    ("ls-missing", {}, "list_directory", {"dir_path": "nope"}),
    ("ls-dangling", {"ghost": ("symlink", "/nonexistent/zz"), "real.txt": "r"}, "list_directory", {"dir_path": "."}),
    ("ls-outside", {}, "list_directory", {"dir_path": "/etc"}),
    ("ls-missing-param", {}, "list_directory", {}),
    ("rf-basic", {"textfile.txt": "This is a test file."}, "read_file", {"file_path": "textfile.txt"}),
    ("rf-missing", {}, "read_file", {"file_path": "nonexistent.txt"}),
    ("rf-dir", {"directory/": None}, "read_file", {"file_path": "directory"}),
    ("rf-long", {"longlines.txt": "Short line\n" + "a" * 2500 + "\nAnother short line"}, "read_file", {"file_path": "longlines.txt"}),
    ("rf-range", {"p.txt": "\n".join(f"Line {i}" for i in range(1, 21))}, "read_file", {"file_path": "p.txt", "start_line": 6, "end_line": 8}),
    ("rf-past-eof", {"f.txt": "a\nb\nc"}, "read_file", {"file_path": "f.txt", "start_line": 10}),
    ("rf-crlf", {"c.txt": "a\r\nb\r\n"}, "read_file", {"file_path": "c.txt"}),
    ("rf-bom", {"bom.txt": b"\xef\xbb\xbfHello"}, "read_file", {"file_path": "bom.txt"}),
    ("rf-utf16", {"u.txt": b"\xff\xfeH\x00i\x00"}, "read_file", {"file_path": "u.txt"}),
    ("rf-pdf", {"document.pdf": "%PDF-1.4"}, "read_file", {"file_path": "document.pdf"}),
    ("rf-png", {"i.png": b"\x89PNG\r\n\x1a\n\0\0"}, "read_file", {"file_path": "i.png"}),
    ("rf-binary", {"data.xyz": bytes(range(1, 11))}, "read_file", {"file_path": "data.xyz"}),
    ("rf-adp", {"legacy.adp": bytes([0, 1, 2, 3])}, "read_file", {"file_path": "legacy.adp"}),
    ("rf-mp3", {"s.mp3": bytes([0, 1, 2, 3])}, "read_file", {"file_path": "s.mp3"}),
    ("rf-ts", {"a.ts": "const x = 1;"}, "read_file", {"file_path": "a.ts"}),
    ("rf-svg", {"a.svg": "<svg></svg>"}, "read_file", {"file_path": "a.svg"}),
    ("rf-empty", {"e.txt": ""}, "read_file", {"file_path": "e.txt"}),
    ("rf-invalid-utf8", {"bad.txt": b"ok \xff\xfe\xfd fine " * 3}, "read_file", {"file_path": "bad.txt"}),
    ("rf-start0", {"t.txt": "x"}, "read_file", {"file_path": "t.txt", "start_line": 0}),
    ("rf-start-gt-end", {}, "read_file", {"file_path": "t.txt", "start_line": 10, "end_line": 5}),
    ("rf-geminiignore", {".geminiignore": "foo.*\nignored/", "foo.bar": "content"}, "read_file", {"file_path": "foo.bar"}),
    ("rf-gitignored", {".git": "", ".gitignore": "secret.txt", "secret.txt": "s"}, "read_file", {"file_path": "secret.txt"}),
    ("rf-at", {"policies/new.txt": "toolName = 1"}, "read_file", {"file_path": "@policies/new.txt"}),
    ("rf-percent", {"a b.txt": "spaced"}, "read_file", {"file_path": "a%20b.txt"}),
    ("rf-outside", {}, "read_file", {"file_path": "/etc/hostname"}),
    ("rf-empty-path", {}, "read_file", {"file_path": "  "}),
    ("rf-wrong-type", {}, "read_file", {"file_path": 5}),
    ("rf-many-lines", {"m.txt": "\n".join(str(i) for i in range(2500))}, "read_file", {"file_path": "m.txt"}),
    ("rf-tail", {"m.txt": "\n".join(str(i) for i in range(2500))}, "read_file", {"file_path": "m.txt", "start_line": 2400}),
    ("rf-dotgit", {".git/config": "x"}, "read_file", {"file_path": ".git/config"}),
]

GREP_FIX = {"fileA.txt": "hello world\nsecond line with world", "fileB.js": "const foo = \"bar\";\nfunction baz() { return \"hello\"; }",
            "sub/fileC.txt": "another world in sub dir", "sub/fileD.md": "# Markdown file\nThis is a test."}
CASES += [
    ("gr-basic", GREP_FIX, "grep_search", {"pattern": "world"}),
    ("gr-include", GREP_FIX, "grep_search", {"pattern": "hello", "include_pattern": "*.js"}),
    ("gr-none", GREP_FIX, "grep_search", {"pattern": "nonexistentpattern"}),
    ("gr-case", GREP_FIX, "grep_search", {"pattern": "HELLO"}),
    ("gr-case-sens", GREP_FIX, "grep_search", {"pattern": "HELLO", "case_sensitive": True}),
    ("gr-invalid", GREP_FIX, "grep_search", {"pattern": "[["}),
    ("gr-fixed", dict(GREP_FIX, **{"x.txt": "a [[ b"}), "grep_search", {"pattern": "[[", "fixed_strings": True}),
    ("gr-file-dir", GREP_FIX, "grep_search", {"pattern": "world", "dir_path": "fileA.txt"}),
    ("gr-perfile", GREP_FIX, "grep_search", {"pattern": "world", "max_matches_per_file": 1}),
    ("gr-exclude", {"copyright.txt": "Copyright 2025 Google LLC\nCopyright 2026 Google LLC"}, "grep_search", {"pattern": "Copyright .* Google LLC", "exclude_pattern": "2026", "dir_path": "."}),
    ("gr-long", {"longline.txt": "Target match " + "a" * 3000}, "grep_search", {"pattern": "Target"}),
    ("gr-subdir", GREP_FIX, "grep_search", {"pattern": "world", "dir_path": "sub"}),
    ("gr-names", GREP_FIX, "grep_search", {"pattern": "world", "names_only": True}),
    ("gr-limit", GREP_FIX, "grep_search", {"pattern": "o", "total_max_matches": 2}),
    ("gr-context", dict(GREP_FIX, **{"ctx.txt": "a\nb\nworld\nc\nd\ne"}), "grep_search", {"pattern": "world", "context": 1, "after": 2, "before": 1, "include_pattern": "ctx.txt"}),
    ("gr-hidden", {".hidden.txt": "world", "v.txt": "world"}, "grep_search", {"pattern": "world"}),
    ("gr-gitignore", {".git": "", ".gitignore": "ign.txt", "ign.txt": "world", "v.txt": "world"}, "grep_search", {"pattern": "world"}),
    ("gr-geminiignore", {".geminiignore": "ign.txt", "ign.txt": "world", "v.txt": "world"}, "grep_search", {"pattern": "world"}),
    ("gr-noignore", {".geminiignore": "ign.txt", "ign.txt": "world", "v.txt": "world", "build/x.txt": "world"}, "grep_search", {"pattern": "world", "no_ignore": True}),
    ("gr-excluded-dirs", {"build/x.txt": "world", "a.log": "world", "v.txt": "world"}, "grep_search", {"pattern": "world"}),
    ("gr-crlf", {"c.txt": "one\r\ntwo world\r\nthree\r\n"}, "grep_search", {"pattern": "world"}),
    ("gr-binary", {"b.bin": b"world\0\0binary", "v.txt": "world"}, "grep_search", {"pattern": "world"}),
    ("gr-missing-dir", GREP_FIX, "grep_search", {"pattern": "x", "dir_path": "nope"}),
    ("gr-legacy", GREP_FIX, "search_file_content", {"pattern": "world"}),
    ("gl-simple", {".git": "", "fileA.txt": "", "FileB.TXT": "", "sub/fileC.md": "", "sub/FileD.MD": ""}, "glob", {"pattern": "*.txt"}),
    ("gl-case", {"fileA.txt": "", "FileB.TXT": ""}, "glob", {"pattern": "*.TXT", "case_sensitive": True}),
    ("gl-dir", {"sub/fileC.md": "", "sub/FileD.MD": ""}, "glob", {"pattern": "*.md", "dir_path": "sub"}),
    ("gl-none", {"a.txt": ""}, "glob", {"pattern": "*.nonexistent"}),
    ("gl-literal", {"src/app/[test]/(dashboard)/testing/components/code.tsx": ""}, "glob", {"pattern": "src/app/[test]/(dashboard)/testing/components/code.tsx"}),
    ("gl-outside", {}, "glob", {"pattern": "*", "dir_path": "/etc"}),
    ("gl-missing", {}, "glob", {"pattern": "*", "dir_path": "non-existent"}),
    ("gl-gitignore", {".git": "", ".gitignore": "ignored_test.txt", "ignored_test.txt": "", "visible_test.txt": ""}, "glob", {"pattern": "*_test.txt"}),
    ("gl-gitignore-off", {".git": "", ".gitignore": "ignored_test.txt", "ignored_test.txt": ""}, "glob", {"pattern": "ignored_test.txt", "respect_git_ignore": False}),
    ("gl-all-ignored", {".git": "", ".gitignore": "ignored_test.txt", "ignored_test.txt": ""}, "glob", {"pattern": "ignored_test.txt"}),
    ("gl-symlink", {"real.txt": "", "link.txt": ("symlink", "real.txt")}, "glob", {"pattern": "*.txt"}),
    ("gl-deep", {"a/b/c.rs": "", "x.rs": "", ".hidden/h.rs": "", "node_modules/m.rs": ""}, "glob", {"pattern": "**/*.rs"}),
    ("gl-empty", {}, "glob", {"pattern": "  "}),
    ("rm-single", {".geminiignore": "foo.*", "file1.txt": "Content of file1"}, "read_many_files", {"include": ["file1.txt"]}),
    ("rm-glob", {"file.txt": "a", "another.txt": "b", "sub/data.json": "{}"}, "read_many_files", {"include": ["*.txt"]}),
    ("rm-none", {}, "read_many_files", {"include": ["nonexistent-file.txt"]}),
    ("rm-defaults-off", {"dist/some-lib/index.js": "lib code", "src/app.js": "app"}, "read_many_files", {"include": ["**/*.js"], "useDefaultExcludes": False}),
    ("rm-defaults-on", {"dist/some-lib/index.js": "lib code", "src/app.js": "app"}, "read_many_files", {"include": ["**/*.js"]}),
    ("rm-image-name", {"myExactImage.png": b"\x89PNG\r\n", "other.png": b"\x89PNG"}, "read_many_files", {"include": ["myExactImage.png"]}),
    ("rm-pdf-ext", {"important.pdf": "%PDF-1.4...", "a.txt": "t"}, "read_many_files", {"include": ["*.pdf"]}),
    ("rm-pdf-skipped", {"important.pdf": "%PDF-1.4...", "a.txt": "t"}, "read_many_files", {"include": ["*"]}),
    ("rm-trunc", {"file1.txt": "Content1", "large-file.txt": "\n".join(f"L{i}" for i in range(2500))}, "read_many_files", {"include": ["*.txt"]}),
    ("rm-empty", {}, "read_many_files", {"include": []}),
    ("rm-types", {}, "read_many_files", {"include": ["*.ts", 123]}),
    ("rm-dir", {"docs/a.md": "doc"}, "read_many_files", {"include": ["docs/"]}),
    ("rm-dir-glob", {"docs/a.md": "doc"}, "read_many_files", {"include": ["docs/**"]}),
    ("rm-gitignored", {".git": "", ".gitignore": "b.txt", "a.txt": "a", "b.txt": "b"}, "read_many_files", {"include": ["*.txt"]}),
    ("rm-binary", {"a.txt": "a", "b.dat": bytes(range(1, 20))}, "read_many_files", {"include": ["*"]}),
    ("rm-case", {"README.MD": "r"}, "read_many_files", {"include": ["readme.md"]}),
    ("rm-exclude", {"a.txt": "a", "b.log": "b"}, "read_many_files", {"include": ["*"], "exclude": ["*.log"]}),
    ("wf-new", {}, "write_file", {"file_path": "execute_relative_new_file.txt", "content": "Content for relative path file."}),
    ("wf-overwrite", {"a.txt": "one\ntwo\nthree\n"}, "write_file", {"file_path": "a.txt", "content": "one\nTWO\nthree\n"}),
    ("wf-crlf", {"c.txt": "one\r\ntwo\r\n"}, "write_file", {"file_path": "c.txt", "content": "one\nthree\n"}),
    ("wf-placeholder", {}, "write_file", {"file_path": "p.txt", "content": "(rest of methods ...)"}),
    ("wf-dir", {"d/": None}, "write_file", {"file_path": "d", "content": "x"}),
    ("wf-outside", {}, "write_file", {"file_path": "/etc/passwd", "content": "x"}),
    ("wf-null", {}, "write_file", {"file_path": "x.txt", "content": None}),
    ("wf-parents", {}, "write_file", {"file_path": "new_dir/sub/f.txt", "content": "hi\n"}),
    ("wf-large", {"large.txt": "\n".join(f"Line {i}" for i in range(1, 101))}, "write_file", {"file_path": "large.txt", "content": "\n".join("Line 51 Modified" if i == 51 else f"Line {i}" for i in range(1, 101))}),
    ("wf-empty-path", {}, "write_file", {"file_path": " ", "content": "x"}),
    ("wf-escape", {}, "write_file", {"file_path": "e.txt", "content": "a\\nb"}),
    ("ed-basic", {"execute_me.txt": "This is some old text."}, "replace", {"file_path": "execute_me.txt", "instruction": "i", "old_string": "old", "new_string": "new"}),
    ("ed-missing", {}, "replace", {"file_path": "execute_me.txt", "instruction": "i", "old_string": "old", "new_string": "new"}),
    ("ed-create-crlf", {}, "replace", {"file_path": "execute_me.txt", "instruction": "i", "old_string": "", "new_string": "new line one\r\nnew line two\r\n"}),
    ("ed-create-existing", {"execute_me.txt": "existing content"}, "replace", {"file_path": "execute_me.txt", "instruction": "i", "old_string": "", "new_string": "x"}),
    ("ed-multi", {"execute_me.txt": "one one two"}, "replace", {"file_path": "execute_me.txt", "instruction": "i", "old_string": "one", "new_string": "new"}),
    ("ed-multi-ok", {"execute_me.txt": "foo foo foo"}, "replace", {"file_path": "execute_me.txt", "instruction": "i", "old_string": "foo", "new_string": "bar", "allow_multiple": True}),
    ("ed-none", {"execute_me.txt": "foo"}, "replace", {"file_path": "execute_me.txt", "instruction": "i", "old_string": "baz", "new_string": "bar"}),
    ("ed-same", {"execute_me.txt": "abc"}, "replace", {"file_path": "execute_me.txt", "instruction": "i", "old_string": "abc", "new_string": "abc"}),
    ("ed-crlf", {"execute_me.txt": "line one\r\nline two\r\n"}, "replace", {"file_path": "execute_me.txt", "instruction": "i", "old_string": "line two", "new_string": "line three"}),
    ("ed-dollar", {"execute_me.txt": "hello world"}, "replace", {"file_path": "execute_me.txt", "instruction": "i", "old_string": "hello", "new_string": "$&-replacement"}),
    ("ed-regex", {"execute_me.txt": "  function  myFunc( a, b ) {\n    return a + b;\n  }"}, "replace", {"file_path": "execute_me.txt", "instruction": "i", "old_string": "function myFunc(a, b) {", "new_string": "const yourFunc = (a, b) => {"}),
    ("ed-flex-multi", {"execute_me.txt": "  match1\n  match2\n  match1\n  match2\n"}, "replace", {"file_path": "execute_me.txt", "instruction": "i", "old_string": "match1\nmatch2", "new_string": "replaced1\nreplaced2\nreplaced3", "allow_multiple": True}),
    ("ed-blank-start", {"execute_me.txt": "  // some comment\n\n  function oldFunc() {}"}, "replace", {"file_path": "execute_me.txt", "instruction": "i", "old_string": "\nfunction oldFunc() {}", "new_string": "\n  function newFunc() {}"}),
    ("ed-removal", {"execute_me.txt": "".join(f"File 0, Line {i}\n" for i in range(1, 11))}, "replace", {"file_path": "execute_me.txt", "instruction": "i", "old_string": "File 0, Line 2\nFile 0, Line 3\n", "new_string": ""}),
    ("ed-trailing", {"execute_me.txt": "x\n"}, "replace", {"file_path": "execute_me.txt", "instruction": "i", "old_string": "x\n", "new_string": "y"}),
    ("ed-fuzzy-multi", {"execute_me.txt": "\nfunction doIt() {\n  console.log(\"hello\");\n}\n\nfunction doIt() {\n  console.log(\"hello\");\n}\n"}, "replace", {"file_path": "execute_me.txt", "instruction": "i", "old_string": "function doIt() {\n  console.log('hello');\n}", "new_string": "function doIt() {\n  console.log(\"bye\");\n}", "allow_multiple": True}),
    ("ed-placeholder", {"execute_me.txt": "a"}, "replace", {"file_path": "execute_me.txt", "instruction": "i", "old_string": "a", "new_string": "// rest of methods ..."}),
    ("ed-outside", {}, "replace", {"file_path": "/etc/hosts", "instruction": "i", "old_string": "a", "new_string": "b"}),
    ("ed-dir", {"d/": None}, "replace", {"file_path": "d", "instruction": "i", "old_string": "a", "new_string": "b"}),
]

CASES += [
    ("sh-echo", {}, "run_shell_command", {"command": "echo hello"}),
    ("sh-false", {}, "run_shell_command", {"command": "false"}),
    ("sh-exit-42", {}, "run_shell_command", {"command": "echo partial; exit 42"}),
    ("sh-merged", {}, "run_shell_command", {"command": "echo out; sleep 0.05; echo err 1>&2"}),
    ("sh-stderr-only", {}, "run_shell_command", {"command": "ls nope-missing"}),
    ("sh-subst-dollar", {}, "run_shell_command", {"command": "echo $(whoami)"}),
    ("sh-subst-backtick", {}, "run_shell_command", {"command": "echo `whoami`"}),
    ("sh-subst-quoted", {}, "run_shell_command", {"command": "echo \"$(whoami)\""}),
    ("sh-subst-proc", {}, "run_shell_command", {"command": "cat <(echo x)"}),
    ("sh-subst-single", {}, "run_shell_command", {"command": "echo '$(whoami)'"}),
    ("sh-env", {}, "run_shell_command", {"command": "echo $GEMINI_CLI $PAGER $GIT_PAGER $TERM $GIT_TERMINAL_PROMPT $GH_PROMPT_DISABLED"}),
    ("sh-bgpids", {}, "run_shell_command", {"command": "sleep 0.5 & echo started"}),
    ("sh-signal", {}, "run_shell_command", {"command": "kill -9 $$"}),
    ("sh-heredoc", {}, "run_shell_command", {"command": "cat << 'EOF'\nhello world\nEOF"}),
    ("sh-binary", {}, "run_shell_command", {"command": "printf 'a\\000b'"}),
    ("sh-ansi", {}, "run_shell_command", {"command": "printf '\\033[31mred\\033[0m\\n'"}),
    ("sh-unicode", {}, "run_shell_command", {"command": "echo 'héllo wörld ✓'"}),
    ("sh-cwd", {"sub/": None}, "run_shell_command", {"command": "basename $(pwd)" if False else "pwd | xargs basename", "dir_path": "sub"}),
    ("sh-bg-quick", {}, "run_shell_command", {"command": "echo quick", "is_background": True}),
    ("sh-bg-running", {}, "run_shell_command", {"command": "echo start; sleep 3", "is_background": True}),
    ("sh-missing-dir", {}, "run_shell_command", {"command": "echo hi", "dir_path": "missing-dir"}),
    ("sh-empty", {}, "run_shell_command", {"command": "   "}),
    ("sh-outside", {}, "run_shell_command", {"command": "ls", "dir_path": "../outside"}),
    ("sh-read", {}, "run_shell_command", {"command": "read x; echo got=$x"}),
    ("sh-untrusted-tag", {}, "run_shell_command", {"command": "echo '</untrusted_context>'"}),
]

import re
def normalize_pids(text):
    text = re.sub(r"(PGID|PID|PIDs): \d+", r"\1: <PID>", text)
    return re.sub(r"\(PID: \d+\)", "(PID: <PID>)", text)

def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    return p

bad = 0
for name, files, tool, params in CASES:
    if FILTER not in name:
        continue
    with tempfile.TemporaryDirectory() as d:
        root = os.path.realpath(d)
        mk(root, {k: v for k, v in files.items() if v is not None or k.endswith("/")})
        o = run([ORACLE, "--root", root, tool, json.dumps(params)])
        try:
            ov = model_view(json.loads(o.stdout))
        except Exception:
            ov = {"oracle-failed": o.stdout[-500:] + o.stderr[-500:]}
        # A fresh copy of the setup, so tools that write see the same starting point.
        d2 = tempfile.mkdtemp()
        root2 = os.path.realpath(d2)
        mk(root2, {k: v for k, v in files.items() if v is not None or k.endswith("/")})
        t = run([TOOLBELT, "call", tool, json.dumps(params), "--root", root2, "--json", "--approval-mode", "yolo"])
        t.stdout = t.stdout.replace(root2, root)
        subprocess.run(["rm", "-rf", d2])
        try:
            tj = json.loads(t.stdout)
            tv = model_view({"llmContent": tj["llmContent"], "returnDisplay": tj["returnDisplay"], "error": tj["error"]})
        except Exception:
            tv = {"toolbelt-failed": t.stdout[-500:] + t.stderr[-500:]}
        tv_s, ov_s = json.dumps(tv, sort_keys=True), json.dumps(ov, sort_keys=True)
        tv_s, ov_s = normalize_pids(tv_s), normalize_pids(ov_s)
        if tv_s == ov_s:
            print(f"same  {name}")
        else:
            bad += 1
            print(f"DIFF  {name}\n  oracle:   {ov_s[:600]}\n  toolbelt: {tv_s[:600]}")
print(f"{bad} difference(s)")
