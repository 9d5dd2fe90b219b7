"""The engine: the model's one worker thread, its jobs, the scheduler and saved KV states.
It knows tokens and budgets, nothing of documents.
"""
