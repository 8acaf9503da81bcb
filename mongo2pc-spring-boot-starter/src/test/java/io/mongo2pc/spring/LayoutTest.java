package io.mongo2pc.spring;

import io.mongo2pc.testing.Layout;
import org.junit.jupiter.api.Test;

/** This module uses core through its public API only, never core's implementation. */
class LayoutTest {

    @Test
    void module_usesNoInternalClassOfCore() {
        Layout.noInternalAccessFrom("io.mongo2pc.spring..").check(Layout.productionClasses("io.mongo2pc.spring"));
    }
}
