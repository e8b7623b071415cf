"""How `--help` reads: metavars instead of Python types, option panels, and two examples per command."""

from __future__ import annotations

import typer

from .commands import app

# What each option takes, as --help shows it (typer would print the Python type: <str>, <int>, <bool>).
METAVARS = {
    "--formula": "NAME",
    "--formula-path": "FILE",
    "--formula-option": "KEY=VALUE",
    "--top-n": "N",
    "--kernel": "REGEX",
    "--sample-programs": "N",
    "--profile-dir": "DIR",
    "--timeout": "SECONDS",
    "--output": "FILE",
    "--markdown": "FILE",
    "--sarif": "FILE",
    "--rewriter": "NAME",
    "--max-attempts": "N",
    "--time-budget": "SECONDS",
    "--max-tokens": "N",
    "--candidates": "N",
    "--devices": "GPUS",
    "--model": "NAME",
    "--api-base": "URL",
    "--api-key-env": "VARIABLE",
    "--transcript": "FILE",
    "--save-transcript": "FILE",
    "--demos": "N",
    "--rounds": "N",
    "--work-dir": "DIR",
    "--out": "FILE",
    "--program": "FILE",
    "--project": "DIR",
    "--out-dir": "DIR",
    "--candidate-timeout": "SECONDS",
    "--racecheck-ctas": "N",
    "--branch-name": "NAME",
    "--base": "BRANCH",
    "--remote": "NAME",
    "--github-repo": "OWNER/NAME",
    "--github-api": "URL",
    "--pr-label": "LABEL",
    "--sandbox-read": "DIR",
    "--sandbox-env": "VARIABLE",
}


# Help panels (a terminal's rich help): the long option names of each group.
PANELS = {
    "Diagnosis": "--formula --formula-path --formula-option --top-n --kernel --device --sample-programs --counters "
    "--profile-dir --timeout --full-run --region-data --all-warps",
    "Rewriting": "--rewriter --model --api-base --api-key-env --program --reasoning --transcript --save-transcript "
    "--optimizer --demos --rounds",
    "Budget": "--max-attempts --candidates --max-tokens --time-budget --candidate-timeout",
    "Validation and sandbox": "--devices --project --racecheck-ctas --head-start --no-sandbox --sandbox-read "
    "--sandbox-env --sandbox-network",
    "Output": "--output --markdown --sarif --format --out-dir --out --work-dir --resume --in-place --force",
    "Branch and pull request": "--branch --branch-name --base --create-pr --remote --github-repo --github-api "
    "--pr-label",
}
PANEL_OF = {name: panel for panel, names in PANELS.items() for name in names.split()}
EXAMPLES = {
    "diagnose": [
        "intelliperf diagnose -- python train.py --steps 3",
        "intelliperf diagnose -f memoryAccess -o - -- python bench.py",
    ],
    "optimize": [
        "intelliperf optimize -f atomicContention -- python train.py",
        "intelliperf optimize -f overlap --model gpt-4.1 --create-pr -- python bench.py",
    ],
    "regions": [
        "intelliperf regions -- python gemm.py",
        "intelliperf regions -k attention --all-warps -- python attn.py",
    ],
    "eval": [
        "intelliperf eval examples/ -r offline",
        "intelliperf eval my_kernels/ --model gpt-4.1 --max-tokens 200000",
    ],
    "campaign": [
        "intelliperf campaign benchmarks/suites/agentkernelarena --only '^vllm/' --devices all",
        "intelliperf campaign my_suite/ --ray auto --resume",
    ],
    "tune": [
        "intelliperf tune examples/ --model gpt-4.1 --out tuned.json",
        "intelliperf tune cases/ --model gpt-4.1 --optimizer mipro",
    ],
    "formulas": ["intelliperf formulas", "intelliperf formulas --formula-path my_formula.py --format json"],
    "rewriters": ["intelliperf rewriters", "intelliperf rewriters --format json"],
}


def click_command():
    """The click command typer builds from `app`, with readable metavars (flags show none) and
    `-- CMD [ARGS]...` (eval: `[CASES]...`) as the positional usage (typer would print `[-- CMD [ARGS]...]...` and
    the Python types <str>, <int>, <bool>)."""
    group = typer.main.get_command(app)
    for name, command in group.commands.items():
        if name in EXAMPLES:  # \b keeps click from rewrapping the lines
            command.epilog = "\b\nExamples:\n" + "\n".join(f"  {line}" for line in EXAMPLES[name])
        for param in command.params:
            if param.param_type_name == "option":
                param.rich_help_panel = PANEL_OF.get(max(param.opts, key=len), "Other")
    for command in [group, *group.commands.values()]:
        command.get_help_option = _quiet_metavar(command.get_help_option)
        for param in command.params:
            if param.param_type_name == "option":  # typer ships its own click: no isinstance on click.Option
                long = max(param.opts, key=len)
                param.metavar = "" if param.is_flag else METAVARS.get(long, param.metavar)
            else:  # the positional: the program (after --), eval's cases, or campaign's one suite
                usage = "-- CMD [ARGS]..." if param.name == "command" else f"[{param.metavar}]..."
                usage = param.metavar if param.nargs == 1 and param.required else usage
                param.display_type_rich = lambda ctx: None
                command.collect_usage_pieces = lambda ctx, c=command, u=usage: [c.options_metavar, u]
    return group


def _quiet_metavar(make_option):
    """--help is made per call; it takes no value, so it shows none."""

    def made(ctx):
        option = make_option(ctx)
        if option is not None:
            option.metavar = ""
        return option

    return made
