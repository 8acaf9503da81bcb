package io.mongo2pc.examples.payments.shop;

/** A checkout that cannot be done, and why: nothing of it was written. */
public class CheckoutRefused extends RuntimeException {

    /** Why, as a client reads it. */
    public enum Code { NO_SUCH_ORDER, NO_SUCH_ITEM, OUT_OF_STOCK, ALREADY_SHIPPED }

    private final Code code;

    public CheckoutRefused(Code code, String message) {
        super(message);
        this.code = code;
    }

    public Code code() {
        return code;
    }
}
