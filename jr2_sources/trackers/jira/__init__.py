"""The Jira Work Source (`jira:https://SITE`): Cloud and Data Center, claims by comment history."""
