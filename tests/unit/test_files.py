"""Output folders (intelliperf.files.output_folder): one intelliperf makes ignores itself in git, the
outermost one where it makes several; one the user made stays as it was."""

from __future__ import annotations

import subprocess

from intelliperf.files import output_folder


def test_the_outermost_folder_made_ignores_itself_and_the_users_folder_is_left_alone(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    output_folder(tmp_path / "intelliperf-eval" / "runs" / "offline" / "case")
    (tmp_path / "intelliperf-eval" / "runs" / "offline" / "case" / "report.json").write_text("{}")
    assert (tmp_path / "intelliperf-eval" / ".gitignore").is_file()
    assert not (tmp_path / "intelliperf-eval" / "runs" / ".gitignore").exists()
    status = subprocess.run(["git", "status", "--porcelain"], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert status.stdout == ""  # nothing for the user to commit by mistake
    mine = tmp_path / "mine"
    mine.mkdir()
    output_folder(mine / "reports")
    assert (mine / "reports" / ".gitignore").is_file() and not (mine / ".gitignore").exists()
    output_folder(mine)  # already there: the user's
    assert not (mine / ".gitignore").exists()
