package io.mongo2pc;

import io.mongo2pc.testing.Layout;
import org.junit.jupiter.api.Test;

/** Core's layout: the public API hands out no internal type, the extension points use none, and the rooms of the implementation stand on each other one way. */
class LayoutTest {

    private static final com.tngtech.archunit.core.domain.JavaClasses CORE = Layout.productionClasses("io.mongo2pc");

    @Test
    void publicApi_exposesNoInternalType() {
        Layout.exposeNoInternalType("io.mongo2pc", "io.mongo2pc.spi").check(CORE);
    }

    @Test
    void extensionPoints_useNoInternalType() {
        Layout.noInternalAccessFrom("io.mongo2pc.spi").check(CORE);
    }

    @Test
    void internalRooms_formNoCycle() {
        Layout.internalRoomsFormNoCycle().check(CORE);
    }

    @Test
    void internalRooms_useOnlyTheRoomsBelowThem() {
        Layout.internalRoomsUseOnlyTheRoomsBelow().check(CORE);
    }
}
