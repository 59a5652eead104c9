// The agent tests' backbone lives in test/support (the runtime conformance suite uses it too); kept here under its old name.
export * from '../support/agentBackbone.ts';
