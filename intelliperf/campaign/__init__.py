"""`intelliperf campaign SUITE`: many programs, each diagnosed, optimized and judged again by its own harness.

suite.py     the tasks of a suite folder (config.yaml each), their commands, fresh copies
peer.py      a task's own correctness and performance commands, their times, the peer's speedup
task.py      one task end to end, in a process of its own (`python -m intelliperf.campaign.task`)
schedule.py  where the task processes run: workers on this host (one per GPU) or Ray tasks
results.py   the rows, the table (JSON, Markdown), the plot, resuming
run.py       the campaign: tasks in, rows out as they finish
"""

__all__ = ["peer", "results", "run", "schedule", "suite", "task"]
