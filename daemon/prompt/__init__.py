"""The model's prompt: the cursor split, the profile header, the window cut to a token budget."""
