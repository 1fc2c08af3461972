"""The LLM investigator's plumbing: configuration, the litellm client with its cassette, prompts, replies."""
