package io.mongo2pc.cli;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.mongo2pc.Values;
import io.mongo2pc.bank.Amounts;
import io.mongo2pc.bank.Bank;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.math.BigDecimal;
import java.util.List;

/** {@code accounts create ID BALANCE} and {@code accounts list [--json]}: the tutorial's account documents. */
@Command(name = "accounts", mixinStandardHelpOptions = true,
        description = "Creates and lists accounts {_id, balance, pendingTransactions} in the accounts collection.",
        subcommands = {AccountsCommand.Create.class, AccountsCommand.ListAccounts.class})
final class AccountsCommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Override
    public void run() {
        throw new ParameterException(spec.commandLine(), "missing subcommand: create or list");
    }

    @Command(name = "create", mixinStandardHelpOptions = true,
        footer = "--json prints {\"id\",\"balance\",\"server\",\"data\"}",
            description = {"Creates account ID with BALANCE: an integer of minor units (1000), or a decimal such as 12.50.",
                    "The balance's decimal places are the account's scale: amounts with more are refused.",
                    "Exit 0 created; 2 bad input or ID exists."})
    static final class Create extends BaseCommand {
        @Parameters(index = "0", paramLabel = "ID", description = "account id (a string)")
        String id;

        @Parameters(index = "1", paramLabel = "BALANCE", description = "opening balance, zero or more; 10.00 makes an account of 2 decimal places")
        String balance;

        @Mixin
        JsonOption json;

        @Override
        protected int run() {
            Number amount = Amounts.parse(balance);
            try (Session session = openCreatingData(java.util.Map.of())) {
                session.bank().createAccount(id, amount);
            }
            if (json()) {
                ObjectNode node = Json.object();
                node.put("id", id);
                node.set("balance", Json.value(amount));
                printJson(where(node));
            } else {
                say("created account " + id + " with balance " + Values.plain(amount));
            }
            return ExitCodes.OK;
        }
    }

    @Command(name = "list", mixinStandardHelpOptions = true,
        footer = "--json prints {\"accounts\":[{\"id\",\"balance\",\"pending\"}],\"total\",\"server\",\"data\"}",
            description = "Lists accounts with their balance and number of pending transactions (markers).")
    static final class ListAccounts extends BaseCommand {
        @Mixin
        JsonOption json;

        @Override
        protected int run() {
            List<Bank.Account> accounts;
            try (Session session = open()) {
                accounts = session.bank().list();
            }
            BigDecimal total = Bank.total(accounts);
            if (json()) {
                ObjectNode node = Json.object();
                ArrayNode list = node.putArray("accounts");
                for (Bank.Account a : accounts) {
                    ObjectNode item = list.addObject();
                    item.set("id", Json.value(TransactionIds.printable(a.id())));
                    item.set("balance", Json.value(a.balance()));
                    item.put("pending", a.pending().size());
                }
                node.set("total", Json.value(total));
                printJson(where(node));
            } else {
                out().printf("%-24s %20s %8s%n", "ACCOUNT", "BALANCE", "PENDING");
                for (Bank.Account a : accounts) {
                    out().printf("%-24s %20s %8d%n", a.id(), a.balance() == null ? "null" : Values.plain(a.balance()), a.pending().size());
                }
                out().printf("%d accounts, total %s%n", accounts.size(), total.toPlainString());
                out().flush();
            }
            return ExitCodes.OK;
        }
    }
}
