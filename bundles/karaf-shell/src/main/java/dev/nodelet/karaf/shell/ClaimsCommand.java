package dev.nodelet.karaf.shell;

import dev.nodelet.dra.claims.ClaimStatus;
import dev.nodelet.shell.views.ClaimViews;
import org.apache.karaf.shell.api.action.Action;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;

/**
 * {@code nodelet:claims}: the DRA claims of this node's pods, their devices with CDI IDs, errors and health; per
 * container claim entry its CDI IDs or why it has none.
 */
@Service
@Command(scope = "nodelet", name = "claims", description = "Lists the ResourceClaims of this node's pods with state,"
    + " pods, prepared devices and CDI IDs, last error; per container its CDI IDs or why it has none; the health of"
    + " each device")
public class ClaimsCommand implements Action {

  /** Optional, so that the other commands of this bundle register without the claim manager. */
  @Reference(optional = true)
  ClaimStatus status;

  @Override
  public Object execute() {
    if (status == null) {
      throw new IllegalStateException("the DRA claim manager (feature nodelet-dra-claims) is not running");
    }
    System.out.print(ClaimViews.claims(status));
    return null;
  }
}
