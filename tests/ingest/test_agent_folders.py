"""Where the daemon looks for the agents' own transcripts (watch.agents): Claude Code's projects/ in
each dir of CLAUDE_CONFIG_DIR (comma-separated, as Claude Code and ccusage read it) or in
~/.config/claude and ~/.claude, and Codex's sessions/ in CODEX_HOME or ~/.codex."""

from __future__ import annotations

from pathlib import Path

from daemon.ingest.agents import AgentFolder, agent_folders


def test_the_defaults_are_under_home() -> None:
    assert agent_folders({"HOME": "/home/me"}) == [
        AgentFolder("claude-code", Path("/home/me/.config/claude/projects")),
        AgentFolder("claude-code", Path("/home/me/.claude/projects")),
        AgentFolder("codex", Path("/home/me/.codex/sessions")),
    ]


def test_claude_config_dir_names_several_dirs_separated_by_commas() -> None:
    env = {"HOME": "/home/me", "CLAUDE_CONFIG_DIR": "/work/claude-a, /work/claude-b,,", "CODEX_HOME": "/work/codex"}
    assert agent_folders(env) == [
        AgentFolder("claude-code", Path("/work/claude-a/projects")),
        AgentFolder("claude-code", Path("/work/claude-b/projects")),
        AgentFolder("codex", Path("/work/codex/sessions")),
    ]


def test_a_dir_named_twice_is_followed_once() -> None:
    env = {"HOME": "/home/me", "CLAUDE_CONFIG_DIR": "~/.claude,/home/me/.claude"}
    assert agent_folders(env) == [
        AgentFolder("claude-code", Path("/home/me/.claude/projects")),
        AgentFolder("codex", Path("/home/me/.codex/sessions")),
    ]
