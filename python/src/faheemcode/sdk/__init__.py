"""The seed's API, durable underneath: ``LLM``, ``Agent``, ``Conversation``.

```python
llm = LLM(usage_id="agent", model="openai/gpt-4o", base_url=None)
agent = Agent(llm=llm, tools=[Tool(name=TerminalTool.name), Tool(name=FileEditorTool.name)])
conversation = Conversation(agent, workspace=os.getcwd())
conversation.send_message("Create countdown.txt …")
thread = threading.Thread(target=conversation.run); thread.start()
conversation.pause(); thread.join()            # run() returns once the pause lands
conversation.run()                               # resumes
print(conversation.state.execution_status, llm.metrics.accumulated_cost)
```
"""

from .agent import Agent
from .conversation import Conversation
from .llm import LLM, WorkerKeyWarning
from .state import ConversationState, Event, ExecutionStatus, Metrics
from .tool import Tool

__all__ = [
    "LLM",
    "Agent",
    "Conversation",
    "ConversationState",
    "Event",
    "ExecutionStatus",
    "Metrics",
    "Tool",
    "WorkerKeyWarning",
]
