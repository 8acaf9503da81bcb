package io.mongo2pc.testing;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaField;
import com.tngtech.archunit.core.domain.JavaMethod;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

/**
 * The layout's rules, checked in the build (ArchUnit): core's implementation ({@code io.mongo2pc.internal})
 * is core's alone, its rooms (one package each) use only the rooms below them, and the public API
 * never hands one of its types to a caller. Each module's layout test applies them to its own classes.
 */
public final class Layout {

    /** Core's implementation, which only core may use. */
    public static final String INTERNAL = "io.mongo2pc.internal..";

    private Layout() { }

    /** The rooms of core's implementation, bottom first, each with the rooms it may use. */
    private static final String[][] ROOMS = {
            {"format"},
            {"wire", "format"},
            {"participants", "format", "wire"},
            {"state", "format", "wire", "participants"},
            {"admin", "format", "wire", "state"},
            {"tutorial", "format", "wire", "participants", "state"},
            {"tworound", "format", "wire", "participants", "state", "tutorial"},
            {"reads", "format", "wire", "participants", "state", "tutorial", "tworound"},
            {"recovery", "format", "wire", "participants", "state", "admin", "tutorial", "tworound"},
            {"interactive", "format", "wire", "participants", "state", "tutorial", "tworound", "reads", "recovery"},
    };

    /** The production classes (no tests) of {@code packages}, as found on the classpath. */
    public static JavaClasses productionClasses(String... packages) {
        return new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS).importPackages(packages);
    }

    /** Classes of {@code packages} (another module's) use nothing of core's implementation. */
    public static ArchRule noInternalAccessFrom(String... packages) {
        return noClasses().that().resideInAnyPackage(packages)
                .should().dependOnClassesThat().resideInAPackage(INTERNAL)
                .because("io.mongo2pc.internal is core's implementation: other modules use the public API (io.mongo2pc, io.mongo2pc.spi)");
    }

    /** Public types of {@code packages} expose no internal type in a public or protected member or their supertypes. */
    public static ArchRule exposeNoInternalType(String... packages) {
        return classes().that().resideInAnyPackage(packages).and().arePublic().should(new ArchCondition<>("expose no type of " + INTERNAL) {
            @Override
            public void check(JavaClass type, ConditionEvents events) {
                List<String> leaks = new ArrayList<>();
                type.getRawSuperclass().filter(Layout::internal).ifPresent(s -> leaks.add("extends " + s.getName()));
                type.getRawInterfaces().stream().filter(Layout::internal).forEach(i -> leaks.add("implements " + i.getName()));
                for (JavaMethod method : type.getMethods()) {
                    if (visible(method.getModifiers())) {
                        if (internal(method.getRawReturnType())) {
                            leaks.add(method.getName() + " returns " + method.getRawReturnType().getName());
                        }
                        method.getRawParameterTypes().stream().filter(Layout::internal)
                                .forEach(p -> leaks.add(method.getName() + " takes " + p.getName()));
                    }
                }
                type.getConstructors().stream().filter(c -> visible(c.getModifiers()))
                        .forEach(c -> c.getRawParameterTypes().stream().filter(Layout::internal)
                                .forEach(p -> leaks.add("a constructor takes " + p.getName())));
                for (JavaField field : type.getFields()) {
                    if (visible(field.getModifiers()) && internal(field.getRawType())) {
                        leaks.add("field " + field.getName() + " is a " + field.getRawType().getName());
                    }
                }
                for (String leak : leaks) {
                    events.add(SimpleConditionEvent.violated(type, type.getName() + ": " + leak));
                }
            }
        });
    }

    private static boolean visible(java.util.Set<JavaModifier> modifiers) {
        return modifiers.contains(JavaModifier.PUBLIC) || modifiers.contains(JavaModifier.PROTECTED);
    }

    private static boolean internal(JavaClass type) {
        JavaClass base = type.isArray() ? type.getBaseComponentType() : type;
        return base.getPackageName().startsWith("io.mongo2pc.internal");
    }

    /** No two of core's rooms ({@code io.mongo2pc.internal.*}) use each other, directly or around a circle. */
    public static ArchRule internalRoomsFormNoCycle() {
        return slices().matching("io.mongo2pc.internal.(*)..").should().beFreeOfCycles()
                .because("each room of the implementation stands on the rooms below it (docs/ARCHITECTURE.md)");
    }

    /**
     * Each of core's rooms uses only the rooms listed for it in {@link #ROOMS} (each package-info says
     * which); the wiring ({@code Engine}, {@code Starter}, in {@code io.mongo2pc.internal} itself) may
     * use them all and no room uses it.
     */
    public static ArchRule internalRoomsUseOnlyTheRoomsBelow() {
        var layers = layeredArchitecture().consideringOnlyDependenciesInLayers()
                .layer("root").definedBy("io.mongo2pc.internal");
        for (String[] room : ROOMS) {
            layers = layers.layer(room[0]).definedBy("io.mongo2pc.internal." + room[0] + "..");
        }
        var rule = layers.whereLayer("root").mayNotBeAccessedByAnyLayer();
        for (String[] room : ROOMS) {
            rule = room.length == 1 ? rule.whereLayer(room[0]).mayNotAccessAnyLayer()
                    : rule.whereLayer(room[0]).mayOnlyAccessLayers(Arrays.copyOfRange(room, 1, room.length));
        }
        return rule.because("each room of the implementation stands on the rooms below it (docs/ARCHITECTURE.md)");
    }
}
