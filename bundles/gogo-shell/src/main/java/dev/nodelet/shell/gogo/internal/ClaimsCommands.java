package dev.nodelet.shell.gogo.internal;

import dev.nodelet.dra.claims.ClaimStatus;
import dev.nodelet.shell.views.ClaimViews;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * The Gogo command {@code nodelet:claims}: per claim its state, pods, prepared devices with CDI IDs and last error;
 * per container claim entry its CDI IDs, or why it has none; the health of each reported device. Read-only.
 */
@Component(service = ClaimsCommands.class, property = {
    "osgi.command.scope=nodelet",
    "osgi.command.function=claims"})
public final class ClaimsCommands {

  private final ClaimStatus status;

  @Activate
  public ClaimsCommands(@Reference(name = "status") ClaimStatus status) {
    this.status = status;
  }

  /** {@code nodelet:claims}. */
  public String claims() {
    return ClaimViews.claims(status);
  }

  /** {@code nodelet:claims} with arguments: its usage (Gogo would only say it cannot coerce them). */
  public String claims(String... args) {
    throw Usage.wrong("claims", args);
  }
}
