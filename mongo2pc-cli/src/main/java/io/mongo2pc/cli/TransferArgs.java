package io.mongo2pc.cli;

import picocli.CommandLine.Parameters;

/** The positional arguments of {@code transfer} and {@code submit}: {@code SRC DST AMOUNT}. */
final class TransferArgs {
    @Parameters(index = "0", paramLabel = "SRC", description = "source account id")
    String source;

    @Parameters(index = "1", paramLabel = "DST", description = "destination account id")
    String destination;

    @Parameters(index = "2", paramLabel = "AMOUNT", description = "an integer of minor units, or a decimal such as 12.50 (no more decimal places than the accounts' balances have)")
    String amount;
}
