"""What both pipelines share: the backend seam they run on, its implementation, single flight."""
