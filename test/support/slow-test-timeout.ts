// Tests that boot real servers, databases, worker threads or models; on a loaded 2-core machine that can
// take longer than Jest's 5 s default. Individual tests still fail on their own assertions.
jest.setTimeout(60_000);
