"""Reward 1 when answer.md in the workspace holds the row's answer, else 0."""
from nemo_gym.verifiers.files import read_text


def verify(workspace, task_data):
    written = read_text(workspace, "answer.md")
    return 1.0 if written is not None and written.strip() == str(task_data["answer"]) else 0.0
