"""The engine: the model's one worker thread, the jobs it runs, the scheduler in front of it
and the saved KV states of recent prompts. Knows tokens and budgets, nothing of documents."""
