// The delegate tool: hands a task to a sub-agent, a child conversation workflow of its own (durable,
// pausable with its parent, visible in the Web UI). Defined like every tool; the workflow runs it,
// since starting and awaiting child workflows is workflow work. No Node imports here.
import { z } from 'zod';
import { defineTool } from '../tools/define.js';

export const DelegateArgs = z.object({
  task: z
    .string()
    .regex(/\S/, 'must not be empty')
    .describe('What the sub-agent should do: a self-contained task with the context it needs.'),
  tools: z.array(z.string()).optional().describe('The tools the sub-agent may use: a subset of yours (default: all of yours).'),
  max_iterations: z.number().int().positive().optional().describe('At most this many model calls for the sub-agent.'),
});

/** `delegate` (opt-in): the model hands a task to a sub-agent, a child conversation with its own tools and budget of steps. */
export const DelegateTool = {
  ...defineTool({
    name: 'delegate',
    description:
      'Hand a self-contained task to a sub-agent that works in the same workspace with its own context, and get its final answer. ' +
      'Several delegate calls in one reply run in parallel.',
    parameters: DelegateArgs,
    retry: 'repeat',
    execute: (): string => {
      throw new Error('delegate runs inside the conversation workflow');
    },
  }),
  inWorkflow: true,
} as const;
