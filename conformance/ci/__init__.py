"""The suite in CI: ``embedding-conformance ci``, the steps of the GitHub Action (action.yml at
the repository root) as commands, so that the action's shell steps stay one line each and what
they do is tested here (runner files, verdicts, the server a workflow starts)."""
