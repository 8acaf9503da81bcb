package io.mongo2pc.bank;

import io.mongo2pc.testing.Layout;
import org.junit.jupiter.api.Test;

/** This module uses core through its public API only, never core's implementation. */
class LayoutTest {

    @Test
    void module_usesNoInternalClassOfCore() {
        Layout.noInternalAccessFrom("io.mongo2pc.bank..").check(Layout.productionClasses("io.mongo2pc.bank"));
    }
}
