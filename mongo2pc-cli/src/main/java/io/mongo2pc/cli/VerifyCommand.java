package io.mongo2pc.cli;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.mongo2pc.bank.Bank;
import org.bson.types.Decimal128;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.math.BigDecimal;

/** {@code verify}: checks the books (total, no negative balance, no marker, nothing open). */
@Command(name = "verify", mixinStandardHelpOptions = true,
        footer = {"--json prints {\"ok\",\"total\",\"accounts\",\"negative\",\"markers\",\"open\",\"leftovers\",\"server\",\"data\"};",
                "\"leftovers\" lists documents of accounts that no committed transaction wrote:",
                "[{\"account\",\"transaction\",\"kind\",\"late\"}]"},
        description = {"Checks the books as of the last committed transaction: the total of balances (with --expect-total),",
                "no negative balance, no marker left on an account, no open transaction, and no leftover (a document",
                "no committed transaction wrote, e.g. a late copy of a canceled insert: never counted as money;",
                "`mongo2pc recover` removes it). Exit 0 ok; 1 not ok."})
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
            ArrayNode leftovers = node.putArray("leftovers");
            for (Bank.Leftover leftover : v.leftovers()) {
                ObjectNode item = leftovers.addObject();
                item.set("account", Json.value(leftover.account()));
                item.set("transaction", Json.value(TransactionIds.printable(leftover.transactionId())));
                item.put("kind", leftover.kind());
                item.put("late", leftover.late());
            }
            printJson(where(node));
        } else {
            say(report(v));
            v.leftovers().forEach(leftover -> say("  " + describe(leftover)));
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
                + ", open transactions " + v.open() + (v.leftovers().isEmpty() ? "" : ", leftovers " + v.leftovers().size());
    }

    /** "account ghost: left by a late copy of the insert of transaction T; not counted ...". */
    static String describe(Bank.Leftover leftover) {
        Object tx = TransactionIds.printable(leftover.transactionId());
        String what = leftover.late() ? "left by a late copy of the insert of transaction " + tx
                : leftover.kind() == null ? "not written by any committed transaction"
                : "held by transaction " + tx + "'s " + leftover.kind() + ", not committed";
        return "leftover in accounts: " + leftover.account() + ", " + what + " (no account as of the last committed "
                + "transaction: not counted)";
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
        if (!v.leftovers().isEmpty()) {
            sb.append(v.leftovers().size()).append(" leftover document(s) in accounts that no committed transaction wrote,"
                    + " not counted (run `mongo2pc recover`); ");
        }
        if (v.open() > 0) {
            sb.append(v.open()).append(" open transaction(s) (run `mongo2pc worker --drain` or `mongo2pc recover`); ");
        }
        return sb.length() == 0 ? "" : sb.substring(0, sb.length() - 2);
    }
}
