//! The table of shell commands and the decision each gets in an interactive session in default
//! mode, with only the bundled rules, in a trusted workspace that has a sibling folder
//! `../outside` (issue 18). Rows marked "issue 18" were allowed unasked before, and really wrote
//! or ran something.

use serde_json::json;
use toolbelt_core::policy::{ApprovalMode, Decision, PolicyCall, PolicyEngine, default_rules};

use Decision::{Allow, AskUser as Ask};

fn engine(root: &std::path::Path) -> PolicyEngine {
    PolicyEngine::new(default_rules().rules, true).with_workspace(root).with_trusted_folder(true)
}

fn decide(e: &PolicyEngine, command: &str) -> Decision {
    let args = json!({ "command": command });
    let call = PolicyCall::builtin("run_shell_command", &args);
    e.check(&call, ApprovalMode::Default).decision
}

const TABLE: &[(&str, Decision)] = &[
    // read-only commands with their operands inside the workspace
    ("ls", Allow),
    ("ls -la src", Allow),
    ("pwd", Allow),
    ("echo hello", Allow),
    ("cat inside.txt", Allow),
    ("head -n 5 inside.txt", Allow),
    ("tail -n 5 inside.txt", Allow),
    ("wc -l inside.txt", Allow),
    ("grep -n foo inside.txt", Allow),
    ("grep -rn foo .", Allow),
    ("cut -d, -f1 inside.txt", Allow),
    ("nl inside.txt", Allow),
    ("tac inside.txt", Allow),
    ("rev inside.txt", Allow),
    ("stat inside.txt", Allow),
    ("uniq inside.txt", Allow),
    ("uniq -c inside.txt", Allow),
    ("seq 1 5", Allow),
    ("true", Allow),
    ("false", Allow),
    ("id", Allow),
    ("expr 1 + 1", Allow),
    ("paste inside.txt inside.txt", Allow),
    ("tr a b", Allow),
    ("numfmt --to=iec 1024", Allow),
    ("cd src", Allow),
    ("cd src && ls", Allow),
    ("whoami", Allow),
    ("uname -a", Allow),
    ("which ls", Allow),
    ("sed -n 1p inside.txt", Allow),
    ("sed -n 1,5p inside.txt", Allow),
    ("find . -name '*.rs'", Allow),
    ("git status", Allow),
    ("git log --oneline -5", Allow),
    ("git diff", Allow),
    // Issue 46 (G8): history can print any file ever committed, `.env` included; limited to
    // named files it is known.
    ("git show HEAD", Ask),
    ("git show HEAD -- inside.txt", Allow),
    ("git show HEAD:inside.txt", Allow),
    ("git show 1a2b3c4d", Ask),
    ("git log -p", Ask),
    ("git log -p -- inside.txt", Allow),
    ("git log --stat", Allow),
    ("git log -L1,2:inside.txt", Allow),
    ("git diff --cached", Allow),
    ("git branch -a", Allow),
    ("ls | grep x", Allow),
    ("cat inside.txt | wc -l", Allow),
    ("ls; pwd", Allow),
    ("base64 inside.txt", Allow),
    ("env ls", Allow),
    ("LC_ALL=C ls", Allow),
    ("TZ=UTC ls", Allow),
    ("LANG=C.UTF-8 sort_unknown", Ask),
    // operands outside the workspace
    ("cat ../outside/secret.txt", Ask),
    ("cat /etc/passwd", Ask),
    ("ls ../outside", Ask),
    ("grep -r foo ..", Ask),
    ("find .. -name x", Ask),
    ("cd .. && ls", Ask),
    // outputs: commands whose operands or options can be written (issue 18)
    ("uniq inside.txt OUT", Ask),
    ("uniq -c inside.txt OUT", Ask),
    ("uniq inside.txt -", Allow),
    ("sort -o OUT inside.txt", Ask),
    ("sort --output=OUT inside.txt", Ask),
    ("tee OUT", Ask),
    ("echo x | tee OUT", Ask),
    ("sed -n 1p '-ew OUT'", Ask),
    ("sed -n 1p '-ew ../outside/OUT'", Ask),
    ("sed -n 1p '-ee touch X'", Ask),
    ("sed -n '1w OUT' inside.txt", Ask),
    ("sed -i s/a/b/ inside.txt", Ask),
    ("sed -n -e 1p inside.txt", Ask),
    ("base64 -o OUT inside.txt", Ask),
    ("find . -fprint OUT", Ask),
    ("find . -delete", Ask),
    ("find . -exec rm {} ;", Ask),
    ("git diff --output=OUT", Ask),
    ("echo x > OUT", Ask),
    ("ls >> OUT", Ask),
    // env's options that take commands or folders (issue 18)
    ("env -S 'touch X' ls", Ask),
    ("env --split-string='touch X' ls", Ask),
    ("env -S'touch X' ls", Ask),
    ("env -C ../outside uniq secret.txt OUT", Ask),
    ("env -C ../outside cat f", Ask),
    ("env --chdir=../outside cat f", Ask),
    ("env -C src ls", Allow),
    ("env -i ls", Allow),
    ("env -u HOME ls", Allow),
    // folders given to a program (issue 18)
    ("git -C ../outside status", Ask),
    ("git -C src status", Allow),
    ("git --git-dir=../outside/.git log", Ask),
    ("git --work-tree=../outside status", Ask),
    ("ls -d ../outside", Ask),
    // assignments that change what runs or what is loaded (issue 18)
    ("BASH_ENV=evil.sh bash -c ls", Ask),
    ("ENV=evil.sh sh -c ls", Ask),
    ("HOME=. bash -lc ls", Ask),
    ("PATH=.:/usr/bin:/bin ls", Ask),
    ("LD_PRELOAD=./x.so ls", Ask),
    ("LD_LIBRARY_PATH=. ls", Ask),
    ("DYLD_INSERT_LIBRARIES=./x.dylib ls", Ask),
    ("GIT_EXTERNAL_DIFF='touch X' git diff", Ask),
    (
        "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=diff.external GIT_CONFIG_VALUE_0='touch X' git diff",
        Ask,
    ),
    ("GIT_PAGER='touch X' git -p log", Ask),
    ("GIT_DIR=../outside/.git git log", Ask),
    ("PAGER='touch X' git log", Ask),
    ("EDITOR='touch X' git log", Ask),
    ("PROMPT_COMMAND='touch X' bash -ic ls", Ask),
    ("SHELLOPTS=xtrace ls", Ask),
    ("BASHOPTS=extglob ls", Ask),
    ("IFS=/ ls", Ask),
    ("PYTHONSTARTUP=x.py ls", Ask),
    ("NODE_OPTIONS='--require ./x.js' ls", Ask),
    ("PERL5OPT=-Mevil ls", Ask),
    ("MY_UNKNOWN_VAR=1 ls", Ask),
    ("FOO=$(touch X) ls", Ask),
    ("env BASH_ENV=evil.sh bash -c ls", Ask),
    ("env PATH=. ls", Ask),
    ("env LD_PRELOAD=./x.so ls", Ask),
    ("export PATH=.; ls", Ask),
    ("BASH_ENV=evil.sh; bash -c ls", Ask),
    ("git -c diff.external='touch X' diff", Ask),
    ("git -p log", Ask),
    ("git --paginate log", Ask),
    // what bash expands that the words do not show (adversarial review, issue 18)
    ("find inside.txt {-exec,touch} pwned \\;", Ask),
    ("find . {-fls,out2}", Ask),
    ("uniq {inside.txt,b1}", Ask),
    ("sed -n 1p {-i,inside.txt}", Ask),
    ("git diff {--output=out3,HEAD}", Ask),
    ("git log {--output,out4}", Ask),
    ("cat {../outside/secret.txt,inside.txt}", Ask),
    ("cat {..,.}/secret.txt", Ask),
    ("cd {..,} && cat secret.txt", Ask),
    ("ls {-R,/}", Ask),
    ("bash -c 'find . {-fls,x}'", Ask),
    ("bash -c \"git log {--output,x}\"", Ask),
    ("git diff $'--output=ansi1' HEAD", Ask),
    ("git log $'--output\\x3dansi2'", Ask),
    ("git diff $'--ext-diff'", Ask),
    ("echo ${y:=a[\\$\\(touch\\ p2\\)]} ${!y}", Ask),
    ("echo ${HOME}", Ask),
    ("git diff --no-index ../outside/secret.txt inside.txt", Ask),
    ("git diff /etc/passwd inside.txt", Ask),
    ("git diff --no-index lnk inside.txt", Ask),
    ("grep -R SECRET", Ask),
    ("grep -Rn SECRET .", Ask),
    ("grep -rn SECRET .", Allow),
    ("cat *", Ask),
    ("cat ?nk", Ask),
    ("cat l[n]k", Ask),
    ("head l*", Ask),
    ("cat *.txt", Allow),
    ("cat src/*", Allow),
    ("find -L .", Ask),
    ("ls -L lnk", Ask),
    ("wc --files0-from=list", Ask),
    ("git diff HEAD~1", Ask),
    ("git diff HEAD~1 -- inside.txt", Allow),
    ("git log origin/main..HEAD", Allow),
    ("echo '{a,b}'", Allow),
    ("grep '*' inside.txt", Allow),
    // writing and running things
    ("touch X", Ask),
    ("rm x", Ask),
    ("rm -rf x", Ask),
    ("mkdir d", Ask),
    ("cp a b", Ask),
    ("mv a b", Ask),
    ("bash evil.sh", Ask),
    ("sh -c 'touch X'", Ask),
    ("bash -c 'ls; touch X'", Ask),
    ("./configure", Ask),
    ("python3 -c 'print(1)'", Ask),
    ("node -e 1", Ask),
    ("make", Ask),
    ("npm test", Ask),
    ("curl http://example.com", Ask),
    ("ls && touch X", Ask),
    ("ls | sh", Ask),
    ("echo $(touch X)", Ask),
    ("xargs rm < list", Ask),
    ("nohup touch X", Ask),
    ("setsid -f sleep 5", Ask),
    ("git push", Ask),
    ("git commit -m x", Ask),
    ("git checkout .", Ask),
    ("ln -s /etc e", Ask),
];

#[test]
fn every_command_in_the_table_gets_its_decision() {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let root = base.join("ws");
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::create_dir_all(base.join("outside")).unwrap();
    std::fs::write(root.join("inside.txt"), "a\n").unwrap();
    std::fs::write(base.join("outside/secret.txt"), "s\n").unwrap();
    std::os::unix::fs::symlink(base.join("outside/secret.txt"), root.join("lnk")).unwrap();
    let e = engine(&root);
    assert!(TABLE.len() >= 80, "the table has {} rows", TABLE.len());
    let wrong: Vec<String> = TABLE
        .iter()
        .filter_map(|(cmd, want)| {
            let got = decide(&e, cmd);
            (got != *want).then(|| format!("{cmd:?}: got {got:?}, want {want:?}"))
        })
        .collect();
    assert!(
        wrong.is_empty(),
        "{} of {} rows wrong:\n{}",
        wrong.len(),
        TABLE.len(),
        wrong.join("\n")
    );
}
