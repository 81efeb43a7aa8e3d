"""The playground: the fake trackers of `jr2_sources.testing.fakes`, seeded from a TOML file and
served from the command line (`jr2 playground github|jira`), with a person's acts on them
(`jr2 playground act ...`)."""
