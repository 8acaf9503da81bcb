package io.mongo2pc.cli;

/**
 * How a command's committed transactions end: {@code inline} (the call returns {@code done}) or
 * {@code background} (it returns at the commit point and the manager's finisher thread releases
 * markers and marks {@code done}, many transactions per request; TransactionManagerBuilder#finishInBackground).
 */
public enum Finish { inline, background }
