package io.mongo2pc.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.mongo2pc.bank.Bank;
import org.bson.types.Decimal128;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.math.BigDecimal;

/** {@code verify}: checks the books (total, no negative balance, no marker, nothing open). */
@Command(name = "verify", mixinStandardHelpOptions = true,
        footer = "--json prints {\"ok\",\"total\",\"accounts\",\"negative\",\"markers\",\"open\"}",
        description = {"Checks the books: the total of balances (with --expect-total), no negative balance, no marker left on an account, no open transaction.",
                "Exit 0 ok; 1 not ok."})
final class VerifyCommand extends BaseCommand {
    @Option(names = "--expect-total", paramLabel = "N", description = "the total the balances must add up to")
    String expectTotal;

    @Mixin
    JsonOption json;

    @Override
    protected int run() {
        Number expected = expectTotal == null ? null : total(expectTotal);
        Bank.Verification v;
        try (Session session = open()) {
            v = session.bank().verify(expected);
        }
        if (json()) {
            ObjectNode node = Json.object();
            node.put("ok", v.ok());
            node.set("total", Json.value(v.total()));
            node.put("accounts", v.accounts());
            node.put("negative", v.negative());
            node.put("markers", v.markers());
            node.put("open", v.open());
            printJson(node);
        } else {
            say(report(v));
        }
        if (!v.ok()) {
            err().println("mongo2pc verify: NOT OK: " + problems(v));
            err().flush();
        }
        return v.ok() ? ExitCodes.OK : ExitCodes.NOT_OK;
    }

    /** A total may exceed what one amount may be (64-bit or Decimal128): any decimal number. */
    private static Number total(String text) {
        String trimmed = text.trim();
        if (!trimmed.matches("[+-]?\\d+(\\.\\d+)?")) {
            throw CliException.badInput("--expect-total '" + text + "' is not a number (digits, optionally with a '.' fraction)");
        }
        try {
            return new Decimal128(new BigDecimal(trimmed));
        } catch (IllegalArgumentException e) {
            throw CliException.badInput("--expect-total '" + text + "' has more than 34 significant digits");
        }
    }

    static String report(Bank.Verification v) {
        return (v.ok() ? "OK" : "NOT OK") + ": total " + v.total().toPlainString()
                + (v.expectedTotal() == null ? "" : " (expected " + v.expectedTotal().toPlainString() + ")")
                + ", accounts " + v.accounts() + ", negative " + v.negative() + ", markers " + v.markers()
                + ", open transactions " + v.open();
    }

    static String problems(Bank.Verification v) {
        StringBuilder sb = new StringBuilder();
        if (v.expectedTotal() != null && v.expectedTotal().compareTo(v.total()) != 0) {
            sb.append("total is ").append(v.total().toPlainString()).append(", expected ")
                    .append(v.expectedTotal().toPlainString()).append("; ");
        }
        if (v.negative() > 0) {
            sb.append(v.negative()).append(" account(s) with a negative balance; ");
        }
        if (v.invalid() > 0) {
            sb.append(v.invalid()).append(" account(s) whose balance is missing or not a number; ");
        }
        if (v.markers() > 0) {
            sb.append(v.markers()).append(" marker(s) left on accounts (run `mongo2pc recover`); ");
        }
        if (v.open() > 0) {
            sb.append(v.open()).append(" open transaction(s) (run `mongo2pc worker --drain` or `mongo2pc recover`); ");
        }
        return sb.length() == 0 ? "" : sb.substring(0, sb.length() - 2);
    }
}
