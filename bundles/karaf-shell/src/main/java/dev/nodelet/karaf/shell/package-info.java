/**
 * Karaf shell commands of Nodelet, scope {@code nodelet}: {@code pods}, {@code objects}, {@code get},
 * {@code strategy} on the object cache ({@code pods --bundles} on the pods run as bundles), {@code drivers},
 * {@code slices} on the DRA node controller and {@code claims} on the claim manager.
 *
 * <p>The text comes from {@code nodelet-shell-views} ({@link dev.nodelet.shell.views.ObjectViews},
 * {@link dev.nodelet.shell.views.DraViews}, {@link dev.nodelet.shell.views.ClaimViews},
 * {@link dev.nodelet.shell.views.PodViews}), the same as the Gogo commands
 * print, so Secret data is redacted the same way. Not exported: Karaf finds the commands
 * through the {@code Karaf-Commands} manifest header.
 */
package dev.nodelet.karaf.shell;
