package dev.nodelet.shell.gogo.internal;

import dev.nodelet.dra.DraStatus;
import dev.nodelet.shell.views.DraViews;
import org.apache.felix.service.command.Descriptor;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * Gogo commands on the DRA node controller: {@code nodelet:drivers} (state, last snapshot, last error and backoff
 * of each driver) and {@code nodelet:slices} (this node's ResourceSlices in the controller's informer cache).
 * Read-only; the text comes from {@link DraViews}, as in the Karaf commands.
 */
@Component(service = DraCommands.class, property = {
    "osgi.command.scope=nodelet",
    "osgi.command.function=drivers",
    "osgi.command.function=slices"})
public final class DraCommands {

  private final DraStatus status;

  @Activate
  public DraCommands(@Reference(name = "status") DraStatus status) {
    this.status = status;
  }

  /** {@code nodelet:drivers}: one line per driver the controller knows. */
  @Descriptor("Lists the DRA drivers the controller knows: state, devices, slices and the last error")
  public String drivers() {
    return DraViews.drivers(status.drivers());
  }

  /** {@code nodelet:drivers} with arguments: its usage (Gogo would only say it cannot coerce them). */
  @Descriptor("Prints the usage of nodelet:drivers")
  public String drivers(String... args) {
    throw Usage.wrong("drivers", args);
  }

  /** {@code nodelet:slices}: one line per ResourceSlice of this node. */
  @Descriptor("Lists this node's ResourceSlices: driver, pool, generation and device count")
  public String slices() {
    return DraViews.slices(status.slices());
  }

  /** {@code nodelet:slices} with arguments: its usage. */
  @Descriptor("Prints the usage of nodelet:slices")
  public String slices(String... args) {
    throw Usage.wrong("slices", args);
  }
}
