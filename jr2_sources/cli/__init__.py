"""The Work Source commands: `jr2 ready`, `jr2 work`, `jr2 local retry` (`commands`), the worker
runner that runs a command per item (`runner`) and the live progress view (`liveview`).
"""
